/// The `created_at` a new message is stored with: the appending instance's
/// clock, unless the conversation's newest message is later (another
/// instance's clock, or this one stepped back), then that message's time.
/// So created times never decrease in id order within a conversation, and
/// a jump by time's first message by time (`messages_by_time`) is also the
/// smallest id created at or after it.
///
/// Computed inside the INSERT: the conversation is locked, and the
/// statement's snapshot, taken after the lock, holds every message
/// committed before it (earlier statements of this batch included).
extension PostgresBatch {
    /// The newest message's `created_at` of the conversation `seq` (an SQL
    /// expression), 0 when it has none: one descent of the primary key.
    static func creationFloorSQL(_ seq: String) -> String {
        """
        coalesce((SELECT newest.created_at FROM messages AS newest WHERE newest.conversation_seq = \(seq) \
        ORDER BY newest.id DESC LIMIT 1), 0)
        """
    }
}
