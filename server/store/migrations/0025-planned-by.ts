// Who plans a commit's decision: the GitHub App (from what GitHub says) or the client that made it
// (an Action-only project). A slot the App planned names the spec version it waits for, and a run
// records who started it, so that only the App's own runs of that version fill the App's slots.
// Decisions the App already published are the App's.
export default /* sql */ `
ALTER TABLE release_decisions ADD COLUMN planned_by TEXT NOT NULL DEFAULT 'client' CHECK (planned_by IN ('app', 'client'));
UPDATE release_decisions SET planned_by = 'app' WHERE decision_id IN (SELECT decision_id FROM github_commits WHERE decision_id IS NOT NULL);
ALTER TABLE release_decision_slots ADD COLUMN spec_version TEXT;
ALTER TABLE runs ADD COLUMN started_by TEXT;
`;
