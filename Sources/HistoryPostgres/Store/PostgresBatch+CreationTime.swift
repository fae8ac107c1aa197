import HistoryStore

/// The `created_at` a new message is stored with: the appending instance's
/// clock, unless the conversation's newest message is later (another
/// instance's clock, or this one stepped back), then that message's time.
/// So created times never decrease in id order within a conversation, and
/// a jump by time's first message by time (`messages_by_time`) is also the
/// smallest id created at or after it.
///
/// The floor is the conversation row's `newest_created_at`
/// (migrations/postgres/0007), read with the row's lock: at READ COMMITTED
/// `FOR UPDATE` returns the row as the last writer committed it, and every
/// writer moves that column with `newest_id`, so it is the time of the
/// newest message committed. Within the batch the floor follows the
/// batch's own appends. Known before the INSERT, the time is in the
/// stored JSON the row is written with: no statement of its own per row
/// (a descent of the primary key per appended row until 0007), no second
/// write of the JSON.
extension PostgresBatch.Counters {
    /// The time the next message is stored with: `clock`, or the newest
    /// message's time when that is later. Taken: it is the floor of the
    /// append after it.
    mutating func takeCreationTime(clock: Timestamp) -> Timestamp {
        newestCreatedAt = max(newestCreatedAt, clock.millisecondsSinceEpoch)
        return Timestamp(millisecondsSinceEpoch: newestCreatedAt)
    }
}
