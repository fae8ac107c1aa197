/// The conversation seqs of users who parked inbox waits, kept so that a
/// wait parking again does not read them again (`InboxWaitIndex`).
///
/// An entry is dropped when a commit changes its user (`forget`, for a
/// publication's `users`: `InboxWaitIndex.woken`). A read that started
/// before such a commit may end after it with the old seqs: `startLoading`/`finishLoading` bracket
/// each read, and a read its user was forgotten during is not kept (the
/// next wait reads again). Bounded: past `maximumSeqs` seqs in all, the
/// cache starts over empty (a miss costs one read, nothing else).
struct MembershipCache {
    /// What a wait registers under: the user's seqs, or every commit.
    enum Seqs: Equatable {
        case conversations([Int64])
        /// More than `InboxWaitIndex.membershipCap`: watches every commit.
        case tooMany
    }

    static let maximumSeqs = 1_000_000
    static let maximumUsers = 200_000

    private var entries: [String: Seqs] = [:]
    private var seqCount = 0
    /// Reads under way per user, and whether a commit changed the user since the oldest began.
    private var loading: [String: (count: Int, stale: Bool)] = [:]

    func seqs(of user: String) -> Seqs? {
        entries[user]
    }

    var userCount: Int { entries.count }

    mutating func startLoading(_ user: String) {
        loading[user, default: (0, false)].count += 1
    }

    /// Keeps `seqs` (nil: the read failed) unless `user` changed since its read began.
    mutating func finishLoading(_ user: String, with seqs: Seqs?) {
        guard let pending = loading[user] else { return }
        loading[user] = pending.count > 1 ? (pending.count - 1, pending.stale) : nil
        guard let seqs, !pending.stale, entries[user] == nil else { return }
        let size = if case .conversations(let list) = seqs { list.count } else { 0 }
        if seqCount + size > Self.maximumSeqs || entries.count >= Self.maximumUsers {
            entries.removeAll()
            seqCount = 0
        }
        entries[user] = seqs
        seqCount += size
    }

    /// A commit changed `user`'s memberships (or may have).
    mutating func forget(_ user: String) {
        if let removed = entries.removeValue(forKey: user), case .conversations(let list) = removed { seqCount -= list.count }
        if loading[user] != nil { loading[user]!.stale = true }
    }

    /// Commits may have gone by unheard (a store's listener lost its
    /// connection): nothing kept can be trusted, nor any read under way.
    mutating func forgetAll() {
        entries.removeAll()
        seqCount = 0
        for user in loading.keys { loading[user]!.stale = true }
    }
}
