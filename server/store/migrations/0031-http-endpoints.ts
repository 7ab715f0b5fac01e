// An http environment's request template and response mapping (JSON: { request, response }); null
// for the protocols whose wire form is fixed.
export default /* sql */ `
ALTER TABLE environments ADD COLUMN http TEXT;
`;
