import HistoryStore

/// The batch's `activity` values, taken from the one `activity_counter` row
/// as late as each request allows.
///
/// Readers follow "activity > last seen", so values must commit in the
/// order they are taken: whoever takes values holds the counter's row from
/// then until COMMIT, and every other writer, on any instance, waits for it.
/// The longer a batch holds it, the more the writers of several instances
/// queue behind each other. So a value is first only a place among the
/// batch's takes (1, 2, 3...), and the row is taken when a real value is
/// needed:
/// - appends, edits and deletes write their value only at the end (the
///   conversations' counters, the inbox notice): the batch moves the counter
///   by the number of values it took just before `finish`, after every
///   conversation lock, within its last run of appends (`flushAppends`)
///   or else in a statement of its own (`takeCounterAtEnd`), and each
///   place becomes `base + place`;
/// - a request that writes its value into a row in its own statement
///   (a created conversation, a member change, a read marker) locks the row
///   first (`takeStoredActivity`), after the conversation locks `begin`
///   took; from then on the batch holds it and every value is real at once.
///
/// A counter with no room for the batch's places (only a tampered row can
/// be near `Int64.max`) is found when the row is locked: the batch is then
/// rolled back and written again with the row locked at its start
/// (`PostgresBatch(connection:countersFirst:)`), where each request's take
/// is checked as it is made and only those past the end are refused
/// `.impossibleStoredValue`, as in the SQLite writer.
extension PostgresBatch {
    /// The next value's place among the batch's takes; its value is
    /// `activityBase + place`. Fails only for a tampered counter, known once
    /// the row is locked.
    func takeActivity() -> Result<Int64, StoreError> {
        if let base = activityBase, base > Int64.max - activityTaken - 1 {
            return .failure(.impossibleStoredValue("the activity counter is at \(base + activityTaken), "
                + "after which no change can be numbered"))
        }
        activityTaken += 1
        return .success(activityTaken)
    }

    /// The next value, real, for a request that writes it now: the
    /// counter's row is locked first if the batch does not hold it yet.
    func takeStoredActivity() throws(PostgresError) -> Result<(place: Int64, value: Int64), StoreError> {
        let base = try lockCounter()
        return takeActivity().map { place -> (place: Int64, value: Int64) in (place, base + place) }
    }

    /// `takeStoredActivity` for a change of `changed`'s conversation, whose
    /// latest place it becomes: the value to write now.
    func takeStoredActivity(for changed: inout Counters) throws(PostgresError) -> Result<Int64, StoreError> {
        try takeStoredActivity().map { taken in
            changed.activityPlace = taken.place
            return taken.value
        }
    }

    /// The stored value of a place taken earlier; the counter's row is
    /// locked by then (`takeStoredActivity` or `takeCounterAtEnd`).
    func storedActivity(_ place: Int64) -> Int64 {
        (activityBase ?? 0) + place
    }

    /// The last value the batch took (what the inbox notice carries).
    var lastActivity: Int64 { storedActivity(activityTaken) }

    /// Locks the counter's row, unless the batch holds it already, and
    /// returns its value as the batch found it. The places taken so far
    /// must fit above it.
    @discardableResult
    func lockCounter() throws(PostgresError) -> Int64 {
        if let activityBase { return activityBase }
        let result = try connection.execute(connection.cachedStatement(sql: """
            SELECT value FROM activity_counter WHERE id = 1 FOR UPDATE
            """))
        guard result.rowCount == 1 else { throw Self.missingCounter }
        return try adopt(base: result.int64(0, 0))
    }

    /// The end of the batch for a counter not locked yet (nor moved by the
    /// last run of appends): moved by every value the batch took, in one
    /// statement that locks the row until COMMIT. A counter held since a
    /// request needed it is written back by `finish` instead
    /// (`counterWriteBack`).
    func takeCounterAtEnd() throws(PostgresError) {
        guard activityBase == nil, activityTaken > 0 || !touched.isEmpty || !inboxUsers.isEmpty else { return }
        let result = try connection.execute(connection.cachedStatement(sql: """
            UPDATE activity_counter SET value = value + $1::bigint
            WHERE id = 1 AND value <= 9223372036854775807 - $1::bigint RETURNING value
            """), [.int64(activityTaken)])
        guard result.rowCount == 1 else {
            // A missing row or one without room: `lockCounter` throws for
            // either (a row lowered since the UPDATE is simply adopted,
            // and written back by `finish`).
            try lockCounter()
            return
        }
        try adopt(base: result.int64(0, 0) - activityTaken)
        counterMovedAtEnd = true
    }

    /// The counter's new value for `finish` to write, when the batch locked
    /// the row before its end and took values since.
    var counterWriteBack: Int64? {
        guard let activityBase, !counterMovedAtEnd, activityTaken > 0 else { return nil }
        return activityBase + activityTaken
    }

    /// Records the counter's value as the batch found it, once the row is
    /// locked; one without room for the places taken so far ends the
    /// batch (`counterHasNoRoom`).
    @discardableResult
    func adopt(base: Int64) throws(PostgresError) -> Int64 {
        guard base <= Int64.max - activityTaken else {
            counterHasNoRoom = true
            throw PostgresError(kind: .other, message: "the activity counter is at \(base), "
                + "with no room for the batch's \(activityTaken) values")
        }
        activityBase = base
        return base
    }

    static let missingCounter = PostgresError(kind: .other, message: "the activity counter's row is missing")
}
