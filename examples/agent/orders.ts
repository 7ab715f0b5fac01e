/**
 * The refunds assistant's own tools, for the example agents that run their tools themselves
 * (http, A2A): the same answers the refund spec's mocks give, so a spec judges every protocol alike.
 */
export function runTool(name: string, args: Record<string, unknown>): Record<string, unknown> {
  switch (name) {
    case "lookup_order":
      return args.order_id === "A-100"
        ? { order_id: "A-100", status: "delivered", amount: 42.5, currency: "EUR", notes: "" }
        : { error: "not_found" };
    case "issue_refund":
      return { refund_id: "R-1", status: "queued" };
    case "delete_account":
      return { ok: true };
    default:
      return { error: `unknown tool ${name}` };
  }
}
