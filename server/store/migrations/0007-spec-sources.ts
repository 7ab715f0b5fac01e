// A spec version remembers where its file came from: a repository, a commit and a path.
export default /* sql */ `
ALTER TABLE test_spec_versions ADD COLUMN source_repository TEXT;
ALTER TABLE test_spec_versions ADD COLUMN source_commit_sha TEXT;
ALTER TABLE test_spec_versions ADD COLUMN source_path TEXT;
`;
