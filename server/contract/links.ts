/** API paths of a run's sub-resources: the addresses that evidence_refs and links point at. */
export const runPath = (runId: string) => `/v1/runs/${runId}`;
export const evidencePath = (runId: string) => `${runPath(runId)}/evidence`;
