// Where a run was executed: by the service's engine, or on someone's machine and uploaded (whose key uploaded it).
// A decision's slot may wait for an upload instead of a run the service executes.
export default /* sql */ `
ALTER TABLE runs ADD COLUMN executor TEXT NOT NULL DEFAULT 'service';
ALTER TABLE runs ADD COLUMN uploaded_by TEXT;
ALTER TABLE release_decision_slots ADD COLUMN executor TEXT NOT NULL DEFAULT 'service';
`;
