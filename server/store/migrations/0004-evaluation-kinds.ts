// Every evaluation says what made it; before, readers had to guess from the metric id's prefix,
// which a spec metric could share. What made an earlier evaluation is told by who judged it.
export default /* sql */ `
ALTER TABLE evaluations ADD COLUMN kind TEXT NOT NULL DEFAULT 'metric';
UPDATE evaluations SET kind = CASE json_extract(judge, '$.model')
  WHEN 'deterministic-expectations@1' THEN 'expectation'
  WHEN 'security-probes@1' THEN 'probe'
  ELSE 'metric' END;
`;
