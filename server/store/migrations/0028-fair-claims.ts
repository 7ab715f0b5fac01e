// Workers are shared fairly among projects: a job may name whose work it is (a run's project), and
// claims go to the key with the fewest jobs running, up to a cap per key. Queued runs get theirs.
export default /* sql */ `
ALTER TABLE jobs ADD COLUMN fair_key TEXT;
UPDATE jobs SET fair_key = (SELECT project_id FROM runs WHERE run_id = json_extract(jobs.payload, '$.run_id')) WHERE task = 'execute_run';
CREATE INDEX jobs_by_fair_key ON jobs (state, fair_key, run_at, job_id);
`;
