// A gated commit's check run is behind when the commit was gated again, or its decision changed,
// since it was last published. Both are counted, not timed: the commit's revision, and the
// decision's latest event sequence. Timestamps could tie within a millisecond (or under an
// injected clock) and hide a change. Every commit is published once more after this migration.
export default /* sql */ `
ALTER TABLE github_commits ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
ALTER TABLE github_commits ADD COLUMN synced_revision INTEGER;
ALTER TABLE github_commits ADD COLUMN synced_sequence INTEGER;
`;
