import HistoryStore

/// The internal `seq` of each public conversation id, as one reader
/// connection learned them: a read that knows the seq finds its
/// conversation row by the integer key instead of the text index.
///
/// One per reader connection (`SQLiteReader`), used by the one thread that
/// holds that connection, so it has no lock. It was shared by the readers
/// behind a `Mutex` once: every page took it, and with the readers' threads
/// all paging its contended path (a priority-inheritance futex) showed in
/// `perf`. Each reader now learns a conversation's seq once.
///
/// The mapping never changes once a conversation is committed (conversations
/// are never deleted or renamed); only committed rows are ever put in.
/// Bounded so a server with millions of conversations keeps a small memory
/// footprint: when full it starts over, which costs one indexed lookup per
/// conversation.
final class ConversationSeqCache {
    private var seqs: [String: Int64] = [:]
    private let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    func seq(of id: ConversationID) -> Int64? {
        seqs[id.rawValue]
    }

    func remember(_ id: ConversationID, seq: Int64) {
        if seqs.count >= capacity { seqs.removeAll(keepingCapacity: true) }
        seqs[id.rawValue] = seq
    }
}
