/** API paths of a run's sub-resources: the addresses that evidence_refs and links point at. */
export const runPath = (runId: string) => `/v1/runs/${runId}`;
export const evidencePath = (runId: string) => `${runPath(runId)}/evidence`;
export const tracePath = (runId: string, sequence?: number) =>
  sequence === undefined ? `${runPath(runId)}/trace` : `${runPath(runId)}/trace/${sequence}`;
export const conversationPath = (runId: string, conversationId?: string) =>
  conversationId === undefined
    ? `${runPath(runId)}/conversations`
    : `${runPath(runId)}/conversations/${conversationId}`;
export const turnPath = (runId: string, conversationId: string, turn: number) =>
  `${conversationPath(runId, conversationId)}/turns/${turn}`;
export const evaluationPath = (runId: string, evaluationId?: string) =>
  evaluationId === undefined ? `${runPath(runId)}/evaluations` : `${runPath(runId)}/evaluations/${evaluationId}`;
export const findingPath = (runId: string, findingId?: string) =>
  findingId === undefined ? `${runPath(runId)}/findings` : `${runPath(runId)}/findings/${findingId}`;

/** Where a run's sub-resources are: the `links` of a run. */
export const runLinks = (runId: string) => ({
  self: runPath(runId),
  evidence: evidencePath(runId),
  conversations: conversationPath(runId),
  trace: tracePath(runId),
  evaluations: evaluationPath(runId),
  findings: findingPath(runId),
});
