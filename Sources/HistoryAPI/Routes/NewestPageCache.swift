import HistoryStore
import Synchronization

/// The newest page of each conversation read lately, as it was sent: its
/// JSON, or that JSON gzipped.
///
/// Every chat screen opens at the newest page, so in a conversation of many
/// members most opens between two changes ask for the same bytes. Kept, such
/// an open costs no encode and no deflate (level 1 takes about 100 µs for a
/// page of 50, more than the rest of the page), and on SQLite, where the
/// versions are kept (`RouteEnvironment.keptVersion`), no read either.
/// Deeper pages are not kept: a `before` page is asked again far less
/// often, and each would push a newest page out.
///
/// Exact by construction. An entry is keyed by what the page's `ETag`
/// holds (the conversation, the limit, gzip or not; the response budget is
/// the server's own) and carries the `version` it was read at; it is used
/// only for that version, which every append, edit and delete moves. It is
/// stored from a read of that version, so nothing unread is ever sent, and
/// an older read never replaces a newer entry. Access is decided for each
/// request before an entry is looked at, as for a read.
///
/// Bounded: `shardCount` shards of at most `bytesPerShard` each (the
/// capacity, by default `defaultCapacityBytes`, 16 MiB: about 1,200 newest
/// pages of 50 as JSON; `--newest-page-cache-mib`), a body over
/// `maximumEntryBytes` or a shard's bytes never kept; a shard over its
/// bytes drops entries in no particular order until it fits. A capacity of
/// 0 keeps nothing: every newest page is read and encoded.
final class NewestPageCache: Sendable {
    struct Key: Hashable, Sendable {
        let conversation: ConversationID
        let limit: Int
        let gzip: Bool

        /// The key of `query`'s answer; nil for any page but the newest.
        init?(_ conversation: ConversationID, _ query: PageQuery, gzip: Bool) {
            guard case .newest = query.cursor, query.window == nil else { return nil }
            self.conversation = conversation
            self.limit = query.limit
            self.gzip = gzip
        }
    }

    /// A page as sent.
    struct Entry: Sendable {
        let version: Int64
        let body: [UInt8]
        /// `body` is gzip (`Content-Encoding: gzip`); else the JSON itself.
        let gzipped: Bool
    }

    static let shardCount = 16
    static let defaultCapacityBytes = 16 << 20
    /// The capacity's share of each shard.
    let bytesPerShard: Int
    /// A newest page of 50 is about 13 KB of JSON, 2.5 KB gzipped.
    static let maximumEntryBytes = 64 * 1024

    private struct Entries {
        var entries: [Key: Entry] = [:]
        var bytes = 0
    }

    private final class Shard: Sendable {
        let state = Mutex(Entries())
    }

    private let shards = (0..<NewestPageCache.shardCount).map { _ in Shard() }
    private let hits = Atomic<Int>(0)
    private let stores = Atomic<Int>(0)

    /// `capacityBytes`: the bodies kept, at most, in all (0: none).
    init(capacityBytes: Int = NewestPageCache.defaultCapacityBytes) {
        bytesPerShard = max(0, capacityBytes) / Self.shardCount
    }

    /// The entry of `key` at `version`; nil when none is kept for it.
    func entry(_ key: Key, version: Int64) -> Entry? {
        let entry = shard(key).state.withLock { shard -> Entry? in
            guard let entry = shard.entries[key], entry.version == version else { return nil }
            return entry
        }
        if entry != nil { hits.add(1, ordering: .relaxed) }
        return entry
    }

    /// Whether an entry of `key` is kept, at any version: worth reading
    /// the conversation's counters first where no version is kept in
    /// memory (PostgreSQL), to find out whether it is still the page.
    func holds(_ key: Key) -> Bool {
        shard(key).state.withLock { $0.entries[key] != nil }
    }

    /// Keeps `body`, read at `version`, unless a newer version is kept.
    func keep(_ key: Key, version: Int64, body: [UInt8], gzipped: Bool) {
        guard body.count <= min(Self.maximumEntryBytes, bytesPerShard) else { return }
        let stored = shard(key).state.withLock { shard -> Bool in
            if let kept = shard.entries[key] {
                guard kept.version < version else { return false }
                shard.bytes -= kept.body.count
            }
            shard.entries[key] = Entry(version: version, body: body, gzipped: gzipped)
            shard.bytes += body.count
            while shard.bytes > bytesPerShard, let victim = shard.entries.first(where: { $0.key != key }) {
                shard.entries[victim.key] = nil
                shard.bytes -= victim.value.body.count
            }
            return true
        }
        if stored { stores.add(1, ordering: .relaxed) }
    }

    /// Pages answered from an entry, and entries stored, since the start (`/metrics`).
    var statistics: (hits: Int, stored: Int) { (hits.load(ordering: .relaxed), stores.load(ordering: .relaxed)) }

    private func shard(_ key: Key) -> Shard {
        shards[Int(UInt(bitPattern: key.conversation.hashValue) % UInt(Self.shardCount))]
    }
}
