import HistoryStore
import Dispatch

/// Loading many messages at once, outside group commit: one transaction
/// for the whole list, for benchmarks and seeding.
extension SQLiteWriter {
    /// Appends `messages` in one transaction (the bench and `seed --direct`);
    /// returns the ids given, the conversation's seq and new version, and
    /// the load's last `activity` value (each message takes one, as if
    /// appended one by one). A repeated or already used `client_id` fails
    /// the whole load with `.clientIDConflict`.
    func bulkAppend(_ messages: [NewMessage], to conversation: ConversationID) throws(StoreError)
        -> (ids: ClosedRange<Int64>, seq: Int64, version: Int64, activity: Int64)? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !messages.isEmpty else { return nil }
        // Taken before writing: if COMMIT fails half-way these ids may
        // still reach the file, so they are never handed out again.
        let ids = try takeMessageIDs(messages.count)
        let firstID = ids.lowerBound
        let lastID = ids.upperBound
        let before = activity
        let loaded = try keptVersions.forgottenOnFailure { () throws(StoreError) in try connection.transaction(.immediate, mapError: StoreError.init) {
            () throws(StoreError) -> (seq: Int64, version: Int64) in
            guard let seq = try seq(of: conversation) else { throw .conversationNotFound(conversation) }
            // The batch path's counters and checks: a tampered version or
            // message_count fails the load instead of trapping.
            var counters = try self.counters(seq: seq, id: conversation)
            let createdAt = creationTime().millisecondsSinceEpoch
            var clientIDs = Set<String>()
            for (offset, new) in messages.enumerated() {
                if let clientID = new.clientID {
                    let used = try sqlite { () throws(SQLiteError) in
                        try connection.cachedStatement(sql: """
                            SELECT 1 FROM messages WHERE conversation_seq = ? AND client_id = ?
                            """).firstRow(seq, clientID) { _ in true } ?? false
                    }
                    guard !used, clientIDs.insert(clientID).inserted else { throw .clientIDConflict(clientID: clientID) }
                }
                if let replyTo = new.replyTo, try !exists(seq: seq, id: replyTo) {
                    throw .replyTargetNotFound(messageID: replyTo)
                }
                try counters.advanceVersion()
                try counters.checkRoomForAppend()
                counters.appended += 1
                let version = counters.version
                let fingerprint = new.clientID == nil ? nil : ClientFingerprint.of(sender: new.sender, body: new.body)
                let tail = MessageJSONTail.encode(Message(appended: new, id: firstID + Int64(offset), in: conversation,
                                                          createdAt: Timestamp(millisecondsSinceEpoch: createdAt),
                                                          version: version))
                try sqlite { () throws(SQLiteError) in
                    try connection.cachedStatement(sql: """
                        INSERT INTO messages (place, sender, body, created_at, reply_to,
                                              client_id, client_fingerprint, created_version, version, json_tail)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """).execute(MessagePlace.of(seq: seq, id: firstID + Int64(offset)), new.sender, new.body, createdAt, new.replyTo,
                                     new.clientID, fingerprint, version, version, tail)
                }
                try insertChange(.message(.created, id: firstID + Int64(offset), seq: seq,
                                          activity: before + Int64(offset) + 1))
            }
            let after = counters.version
            guard before <= Int64.max - Int64(messages.count) else {
                throw .impossibleStoredValue("the activity counter is at \(before), too high to number \(messages.count) more changes")
            }
            let lastActivity = before + Int64(messages.count)
            try sqlite { () throws(SQLiteError) in
                try connection.cachedStatement(sql: """
                    UPDATE conversations SET message_count = message_count + ?, oldest_id = coalesce(oldest_id, ?),
                                             newest_id = ?, version = ?, activity = ?
                    WHERE seq = ?
                    """).execute(messages.count, firstID, lastID, after, lastActivity, seq)
                try connection.cachedStatement(sql: "UPDATE activity_counter SET value = ? WHERE id = 1").execute(lastActivity)
            }
            keptVersions.willCommit(CollectionOfOne((conversation, after)))
            return (seq, after)
        } }
        // Only once committed: a rolled-back load took no values.
        activity = before + Int64(messages.count)
        storedActivity = activity
        return (firstID...lastID, loaded.seq, loaded.version, activity)
    }
}
