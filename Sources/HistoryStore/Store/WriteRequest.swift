/// One write waiting for the writer: what to do and whom to answer.
///
/// Every write (not only appends) goes through the same queue, so the
/// single writer sees them in one order and ids and versions follow commit
/// order. Inputs were validated before the request was made.
package enum WriteRequest: Sendable {
    case createConversation(id: ConversationID?, title: String?, owner: UserID?,
                            completion: @Sendable (Result<Conversation, StoreError>) -> Void)
    case append(NewMessage, conversation: ConversationID,
                completion: @Sendable (Result<AppendOutcome, StoreError>) -> Void)
    case edit(messageID: Int64, conversation: ConversationID, body: String,
              completion: @Sendable (Result<Message, StoreError>) -> Void)
    case delete(messageID: Int64, conversation: ConversationID,
                completion: @Sendable (Result<Message, StoreError>) -> Void)
    case putMember(UserID, role: MemberRole, conversation: ConversationID,
                   completion: @Sendable (Result<MemberChange, StoreError>) -> Void)
    case removeMember(UserID, conversation: ConversationID,
                      completion: @Sendable (Result<Bool, StoreError>) -> Void)
    case markRead(UserID, conversation: ConversationID, upTo: Int64,
                  completion: @Sendable (Result<ReadState, StoreError>) -> Void)

    /// Answers the request with `error`.
    package func fail(_ error: StoreError) {
        switch self {
        case .createConversation(_, _, _, let completion): completion(.failure(error))
        case .append(_, _, let completion): completion(.failure(error))
        case .edit(_, _, _, let completion): completion(.failure(error))
        case .delete(_, _, let completion): completion(.failure(error))
        case .putMember(_, _, _, let completion): completion(.failure(error))
        case .removeMember(_, _, let completion): completion(.failure(error))
        case .markRead(_, _, _, let completion): completion(.failure(error))
        }
    }
}
