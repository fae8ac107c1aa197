import HistoryStore
/// A message's key in the `messages` table (migration 0002): its
/// conversation's seq in the high bits, its id in the low 36.
///
/// Why one integer: a rowid B-tree's interior cells hold only that key, so
/// the tree stays shallow and its interior pages stay in the CPU caches,
/// while one conversation's messages are still one contiguous run in id
/// order. Every page is then a range of places, `lower < place < upper`.
enum MessagePlace {
    static let idBits: Int64 = 36

    /// The largest message id the layout holds: 2^36 - 1, about 68.7 billion.
    static let maximumID: Int64 = (1 << idBits) - 1

    /// The largest conversation seq: 2^27 - 2, about 134 million, so that
    /// even its `upperBound` stays below 2^63.
    static let maximumSeq: Int64 = (1 << (63 - idBits)) - 2

    /// The place of message `id`, which must be in `1...maximumID`.
    static func of(seq: Int64, id: Int64) -> Int64 {
        precondition((1...maximumID).contains(id), "message id \(id) is outside the layout")
        return seq << idBits | id
    }

    /// `seq` as read from the file, when the layout can hold it: places and
    /// bounds are computed from it with plain arithmetic, which would trap
    /// (or reach into another conversation) for a seq a tampered file holds.
    static func checkedSeq(_ seq: Int64, of conversation: ConversationID) throws(StoreError) -> Int64 {
        guard (1...maximumSeq).contains(seq) else {
            throw .impossibleStoredValue("conversation '\(conversation.rawValue)' has the internal key \(seq), "
                + "outside 1...\(maximumSeq)")
        }
        return seq
    }

    /// Whether `id` can name a stored message at all (a larger one would
    /// alias a message of the next conversation).
    static func holds(_ id: Int64) -> Bool {
        (1...maximumID).contains(id)
    }

    /// Where a cursor sits: ids past the layout clamp to the conversation's
    /// ends, so `place < cursor` and `place > cursor` keep meaning `id < ID`
    /// and `id > ID` and never reach into a neighbouring conversation.
    static func cursor(seq: Int64, id: Int64) -> Int64 {
        (seq << idBits) + min(max(id, 0), 1 << idBits)
    }

    /// Below every message of the conversation (its id 0).
    static func lowerBound(seq: Int64) -> Int64 {
        seq << idBits
    }

    /// Above every message of the conversation.
    static func upperBound(seq: Int64) -> Int64 {
        (seq + 1) << idBits
    }
}
