@preconcurrency import Crypto
import Synchronization

/// Tokens that already verified, so a client's next requests with the same
/// token skip the signature check (an ES256 verification costs far more than
/// serving a cached page) until the token expires.
///
/// Entries are keyed by the SHA-256 of the token's bytes, not the token: the
/// memory per entry stays small whatever the token's size, and the cache
/// holds no usable credential. An entry is answered only while the clock is
/// before its deadline (`exp` plus leeway); after that the lookup reports
/// the token expired and drops it. `nbf` and `iat` need no re-check: they
/// held when the token was verified, and time only moves on.
///
/// The size is bounded by `capacity`: when full, the oldest entry is evicted
/// first (insertion order), so a flood of distinct valid tokens costs a
/// re-verification later, never unbounded memory.
final class VerifiedTokenCache: Sendable {
    /// What the cache knows about a token.
    enum Lookup: Equatable {
        case miss
        case verified(Caller)
        /// It verified once, and its deadline has passed.
        case expired
    }

    private struct Entry {
        let caller: Caller
        let deadline: Double
        let serial: UInt64
    }

    private struct State {
        var entries: [SHA256.Digest: Entry] = [:]
        /// Keys in insertion order from `head` on; a pair whose serial no
        /// longer matches its entry was removed or replaced and is skipped.
        var order: [(key: SHA256.Digest, serial: UInt64)] = []
        var head = 0
        var nextSerial: UInt64 = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: the most tokens kept; 0 disables caching.
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The key under which `token` is cached.
    static func key(for token: UnsafeBufferPointer<UInt8>) -> SHA256.Digest {
        SHA256.hash(data: UnsafeRawBufferPointer(token))
    }

    static func key(for token: [UInt8]) -> SHA256.Digest {
        token.withUnsafeBufferPointer { key(for: $0) }
    }

    func lookup(_ key: SHA256.Digest, now: Double) -> Lookup {
        state.withLock { state in
            guard let entry = state.entries[key] else { return .miss }
            guard now < entry.deadline else {
                state.entries[key] = nil
                return .expired
            }
            return .verified(entry.caller)
        }
    }

    /// Remembers a verified token until `deadline` (seconds since the epoch).
    func insert(_ key: SHA256.Digest, caller: Caller, deadline: Double) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if state.entries[key] == nil {
                while state.entries.count >= capacity, state.head < state.order.count {
                    let oldest = state.order[state.head]
                    state.head += 1
                    if state.entries[oldest.key]?.serial == oldest.serial {
                        state.entries[oldest.key] = nil
                    }
                }
            }
            let serial = state.nextSerial
            state.nextSerial += 1
            state.entries[key] = Entry(caller: caller, deadline: deadline, serial: serial)
            state.order.append((key, serial))
            // Drop the consumed prefix once it is most of the array, so the
            // order list stays within a small multiple of `capacity`.
            if state.head > 64, state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            if state.order.count - state.head > 2 * capacity + 64 {
                compact(&state)
            }
        }
    }

    /// How many tokens are cached (expired ones not yet looked up included).
    var count: Int {
        state.withLock { $0.entries.count }
    }

    /// Rebuilds the order list from the live entries, when re-inserts of the
    /// same tokens have filled it with stale pairs.
    private func compact(_ state: inout State) {
        let live = state.order[state.head...].filter { state.entries[$0.key]?.serial == $0.serial }
        state.order = Array(live)
        state.head = 0
    }
}
