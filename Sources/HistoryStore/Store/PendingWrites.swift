/// The queue of group commit, as both stores' writers keep it: writes wait
/// here while a batch is being written, and the next batch takes all of
/// them (up to a maximum) at once. Kept inside the writer's `Mutex`.
///
/// At most one drain runs at a time: `admit` says when the caller must
/// start one, and `nextBatch` ends it by returning an empty batch.
package struct PendingWrites {
    /// What `admit` did with a request.
    package enum Admission {
        /// The queue is closed: answer the request `.closed`.
        case rejected
        /// Queued, and no drain runs: start one.
        case startDrain
        /// Queued behind a drain that will take it.
        case queued
    }

    private var pending: [WriteRequest] = []
    /// True while a drain is scheduled or running.
    private var isDraining = false
    package private(set) var isClosed = false

    package init() {}

    package mutating func admit(_ request: WriteRequest) -> Admission {
        guard !isClosed else { return .rejected }
        pending.append(request)
        guard !isDraining else { return .queued }
        isDraining = true
        return .startDrain
    }

    /// Later requests are rejected; those queued are still taken.
    package mutating func close() {
        isClosed = true
    }

    /// The oldest `maximum` requests or fewer; empty when none is left,
    /// which ends the drain.
    package mutating func nextBatch(maximum: Int) -> [WriteRequest] {
        guard !pending.isEmpty else {
            isDraining = false
            return []
        }
        if pending.count <= maximum {
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        defer { pending.removeFirst(maximum) }
        return Array(pending.prefix(maximum))
    }
}
