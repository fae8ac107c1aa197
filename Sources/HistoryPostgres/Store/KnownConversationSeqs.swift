import Synchronization

/// The seqs of conversations the writer has locked or created, by public
/// id, so a batch's `client_id` lookup (`PostgresBatch.clientIDPrefetch`)
/// can name each conversation by its key and skip a lookup of
/// `conversations` per appended row (docs/performance.md, "The client_id
/// lookup by seq").
///
/// Safe to keep across batches and instances because a conversation's
/// seq never changes and no conversation is ever deleted
/// (migrations/postgres/0006): a seq learned once stays true. Bounded:
/// when full it starts again empty, and a conversation it does not know
/// is looked up by id as before.
final class KnownConversationSeqs: Sendable {
    static let capacity = 65_536

    private let seqs = Mutex<[String: Int64]>([:])

    func seq(of id: String) -> Int64? {
        seqs.withLock { $0[id] }
    }

    func remember(_ id: String, seq: Int64) {
        seqs.withLock { seqs in
            if seqs.count >= Self.capacity && seqs[id] == nil { seqs.removeAll(keepingCapacity: true) }
            seqs[id] = seq
        }
    }
}
