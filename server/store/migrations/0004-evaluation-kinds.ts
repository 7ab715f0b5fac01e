// Every evaluation says what made it; before, readers had to guess from the metric id's prefix.
// Spec versions keep the line of each part that evaluations cite, when they came as YAML.
export default /* sql */ `
ALTER TABLE evaluations ADD COLUMN kind TEXT NOT NULL DEFAULT 'metric';
UPDATE evaluations SET kind = CASE
  WHEN metric_id LIKE 'expect.%' THEN 'expectation'
  WHEN metric_id LIKE 'probe.%' THEN 'probe'
  WHEN metric_id LIKE 'detector.%' THEN 'detector'
  ELSE 'metric' END;
ALTER TABLE test_spec_versions ADD COLUMN source_lines TEXT;
`;
