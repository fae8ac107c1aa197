import HistoryStore
/// Creating conversations, inside the batch transaction.
extension SQLiteWriter {
    /// With an `owner`, two rows are written (the conversation and its
    /// owner), so they are made one unit with a savepoint; without one the
    /// single INSERT needs none.
    /// Creating takes an `activity` value, shared by the owner's member row.
    func createConversation(id: ConversationID?, title: String?, owner: UserID?) throws(StoreError) -> Conversation {
        let activity = try takeActivity()
        guard let owner else {
            let (seq, conversation) = try insertConversation(id: id, title: title, activity: activity)
            batchSeqs[conversation.id.rawValue] = seq
            return conversation
        }
        let (seq, conversation) = try asOneUnit { () throws(StoreError) in
            let (seq, conversation) = try insertConversation(id: id, title: title, activity: activity)
            try insertMember(Member(userID: owner, role: .owner, joinedAt: conversation.createdAt), seq: seq, activity: activity)
            return (seq, conversation)
        }
        // Only once both rows stand: a rolled-back seq must not be remembered.
        batchSeqs[conversation.id.rawValue] = seq
        batchInboxUsers.insert(owner.rawValue)
        batchChanges.append(.member(.memberAdded, Member(userID: owner, role: .owner, joinedAt: conversation.createdAt),
                                    seq: seq, activity: activity))
        return conversation
    }

    /// Writes the conversation row; the caller records its seq in `batchSeqs`.
    private func insertConversation(id: ConversationID?, title: String?, activity: Int64) throws(StoreError)
        -> (seq: Int64, conversation: Conversation) {
        let title = title?.isEmpty == false ? title : nil
        let conversationID: ConversationID
        if let id {
            guard try seq(of: id) == nil else { throw .conversationExists(id) }
            conversationID = id
        } else {
            conversationID = try unusedGeneratedID()
        }
        let createdAt = Timestamp.now()
        // Chosen here rather than by SQLite, so that a seq the message
        // layout cannot hold is refused before anything is written.
        let seq = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT coalesce(max(seq), 0) + 1 FROM conversations")
                .firstRow { $0.int64(0) } ?? 1
        }
        guard seq <= MessagePlace.maximumSeq else {
            throw .idSpaceExhausted("no room for another conversation: the store holds \(MessagePlace.maximumSeq)")
        }
        try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: """
                INSERT INTO conversations (seq, id, title, created_at, activity) VALUES (?, ?, ?, ?, ?)
                """).execute(seq, conversationID.rawValue, title, createdAt.millisecondsSinceEpoch, activity)
        }
        return (seq, Conversation(id: conversationID, title: title, createdAt: createdAt, messageCount: 0,
                                  oldestID: nil, newestID: nil, version: 0))
    }
}
