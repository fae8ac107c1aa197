/// One write waiting for the writer: what to do, who asks, and whom to answer.
///
/// Every write (not only appends) goes through the same queue, so the
/// single writer sees them in one order and ids and versions follow commit
/// order. Inputs were validated before the request was made; the caller's
/// `AccessCheck` is decided by the writer inside the transaction that
/// writes, so a removal committed before it is always seen.
package enum WriteRequest: Sendable {
    case createConversation(id: ConversationID?, title: String?, owner: UserID?,
                            completion: @Sendable (Result<Conversation, StoreError>) -> Void)
    case append(NewMessage, conversation: ConversationID, access: AccessCheck = .admin,
                completion: @Sendable (Result<AppendOutcome, StoreError>) -> Void)
    case edit(messageID: Int64, conversation: ConversationID, body: String, access: AccessCheck = .admin,
              completion: @Sendable (Result<Message, StoreError>) -> Void)
    case delete(messageID: Int64, conversation: ConversationID, access: AccessCheck = .admin,
                completion: @Sendable (Result<Message, StoreError>) -> Void)
    case putMember(UserID, role: MemberRole, conversation: ConversationID, access: AccessCheck = .admin,
                   completion: @Sendable (Result<MemberChange, StoreError>) -> Void)
    case removeMember(UserID, conversation: ConversationID, access: AccessCheck = .admin,
                      completion: @Sendable (Result<Bool, StoreError>) -> Void)
    case markRead(UserID, conversation: ConversationID, upTo: Int64, access: AccessCheck = .admin,
                  completion: @Sendable (Result<ReadState, StoreError>) -> Void)

    /// The conversation the request writes in and the caller's check; nil
    /// for a create, which names no existing conversation.
    package var target: (conversation: ConversationID, access: AccessCheck)? {
        switch self {
        case .createConversation: nil
        case .append(_, let conversation, let access, _), .edit(_, let conversation, _, let access, _),
             .delete(_, let conversation, let access, _), .putMember(_, _, let conversation, let access, _),
             .removeMember(_, let conversation, let access, _), .markRead(_, let conversation, _, let access, _):
            (conversation, access)
        }
    }

    /// Answers the request with `error`.
    package func fail(_ error: StoreError) {
        switch self {
        case .createConversation(_, _, _, let completion): completion(.failure(error))
        case .append(_, _, _, let completion): completion(.failure(error))
        case .edit(_, _, _, _, let completion): completion(.failure(error))
        case .delete(_, _, _, let completion): completion(.failure(error))
        case .putMember(_, _, _, _, let completion): completion(.failure(error))
        case .removeMember(_, _, _, let completion): completion(.failure(error))
        case .markRead(_, _, _, _, let completion): completion(.failure(error))
        }
    }
}
