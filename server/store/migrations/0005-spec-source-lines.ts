// A spec version keeps the line of each part that evaluations cite (from its YAML text), so that
// what failed can be shown at its line.
export default /* sql */ `
ALTER TABLE test_spec_versions ADD COLUMN source_lines TEXT;
`;
