import HistoryStore
import Synchronization

/// A cache of the internal `seq` of each public conversation id, shared by
/// the readers: a read that knows the seq finds its conversation row by the
/// integer key instead of the text index.
///
/// The mapping never changes once a conversation is committed (conversations
/// are never deleted or renamed), so readers can share it freely; only
/// committed rows are ever put in. Bounded so a server with millions of
/// conversations keeps a small memory footprint: when full it starts over,
/// which costs one indexed lookup per conversation.
final class ConversationSeqCache: Sendable {
    private let seqs = Mutex<[String: Int64]>([:])
    private let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    func seq(of id: ConversationID) -> Int64? {
        seqs.withLock { $0[id.rawValue] }
    }

    func remember(_ id: ConversationID, seq: Int64) {
        seqs.withLock { seqs in
            if seqs.count >= capacity { seqs.removeAll(keepingCapacity: true) }
            seqs[id.rawValue] = seq
        }
    }
}
