/** Why a commit could not be gated, shown as a failed check run with an annotation at each place. */
export interface GateProblem {
  title: string;
  summary: string;
  annotations: { path: string; line: number; message: string }[];
}

export function gateProblem(title: string, summary: string, annotations: GateProblem["annotations"] = []): GateProblem {
  return { title, summary, annotations };
}
