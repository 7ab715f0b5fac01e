// A spec version from a repository lists its files: the spec's and each table's (vars_file) Git
// blob SHA, as JSON [{path, blob_sha}].
export default /* sql */ `
ALTER TABLE test_spec_versions ADD COLUMN source_files TEXT;
`;
