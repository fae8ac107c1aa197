/// The last answers of GETs that carried an `ETag`, so asking again sends
/// `If-None-Match` and a 304 (no body) stands for the answer held.
///
/// Why the held answer is safe to return: the server's tag changes whenever
/// the answer's bytes would (docs/API.md, "Conditional requests and
/// compression"), and it decides a 304 after the caller's access, so a 304
/// means "a 200 now would carry the very bytes you decoded". Keyed by route
/// and query, not by base URL: every instance behind a fail-over address
/// serves the same data and the same tags.
///
/// Bounded twice, least recently used first out: at most ``capacity``
/// answers and ``byteLimit`` bytes of their bodies (an answer larger than
/// that is not kept). A chat screen reopening a conversation, a resumed
/// inbox, a conversation's header are a handful of entries; this is not an
/// offline store.
final class RevalidationCache: Sendable {
    struct Entry: Sendable {
        /// The `ETag` field as the server sent it, quotes included.
        let tag: String
        /// The decoded answer.
        let value: any Sendable
        /// The body's size, counted against ``byteLimit``.
        let bytes: Int
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        /// Keys, least recently used first.
        var order: [String] = []
        var bytes = 0
    }

    /// Default: 64 answers.
    let capacity: Int
    /// Default: 8 MiB of bodies.
    let byteLimit: Int
    private let state = LockedBox(State())

    init(capacity: Int = 64, byteLimit: Int = 8 << 20) {
        self.capacity = max(capacity, 1)
        self.byteLimit = max(byteLimit, 1)
    }

    /// The answer held for `key` if it decoded as `T`, marked as just used.
    func entry<T: Sendable>(for key: String, as type: T.Type) -> (tag: String, value: T)? {
        state.withLock { state in
            guard let entry = state.entries[key], let value = entry.value as? T else { return nil }
            Self.touch(key, in: &state)
            return (entry.tag, value)
        }
    }

    /// Keeps `value` under `key` with its tag, dropping the least recently
    /// used answers past the bounds.
    func store(_ value: some Sendable, tag: String, bytes: Int, for key: String) {
        state.withLock { state in
            Self.remove(key, from: &state)
            guard bytes <= byteLimit else { return }
            state.entries[key] = Entry(tag: tag, value: value, bytes: bytes)
            state.order.append(key)
            state.bytes += bytes
            while state.order.count > capacity || state.bytes > byteLimit {
                Self.remove(state.order[0], from: &state)
            }
        }
    }

    /// Forgets the answer held for `key` (the server sent one without a tag).
    func remove(_ key: String) {
        state.withLock { Self.remove(key, from: &$0) }
    }

    /// How many answers are held.
    var count: Int {
        state.withLock { $0.entries.count }
    }

    private static func touch(_ key: String, in state: inout State) {
        guard let index = state.order.firstIndex(of: key) else { return }
        state.order.remove(at: index)
        state.order.append(key)
    }

    private static func remove(_ key: String, from state: inout State) {
        guard let entry = state.entries.removeValue(forKey: key) else { return }
        state.bytes -= entry.bytes
        if let index = state.order.firstIndex(of: key) { state.order.remove(at: index) }
    }
}
