// A case that failed is tried again up to `defaults.retry_failed` times: each try is a conversation
// of its own (`retry` 0 for the first), and what its checks said, when judged to decide whether to
// try again, is kept (`retry_outcome`) so a resumed run does not judge it twice.
export default /* sql */ `
ALTER TABLE conversations ADD COLUMN retry INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN retry_outcome TEXT CHECK (retry_outcome IN ('passed', 'failed'));
CREATE INDEX conversations_by_case ON conversations (run_id, kind, scenario_id, repeat_index, retry);
`;
