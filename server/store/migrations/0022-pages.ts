// The run page shows each conversation with its evaluations: found by conversation.
export default /* sql */ `
CREATE INDEX evaluations_by_conversation ON evaluations (conversation_id);
`;
