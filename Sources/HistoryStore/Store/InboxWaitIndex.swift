/// `Waiters`' index of user-feed waits: "tell me when something in U's
/// inbox changes after activity A".
///
/// A wait is registered under its user (woken when the user's marker or
/// memberships change) and under each of the user's conversations (woken
/// by any change there): so a post wakes the parked members of its
/// conversation and nobody else, and a commit costs one dictionary lookup
/// per conversation it touched. A user with more than `membershipCap`
/// conversations is woken by every commit instead (a spurious wake costs
/// that user one feed read, nothing more).
///
/// A woken poll that answers parks again at once (the client's next
/// request), so parking must cost no store read in the steady state
/// (docs/performance.md, "The inbox feed with 10,000 parked users"):
/// - the user's conversation seqs are read once and kept
///   (`MembershipCache`) until a commit changes the user (a publication's
///   `users`: its memberships, marker or conversations it created), so a
///   re-park reads nothing;
/// - the first look ("anything after A already?") is skipped when A is at
///   or past the last activity published: every commit after A is then
///   still to be published, and the wait, registered before it, is woken
///   by it. (Only a store that publishes every commit, with its activity,
///   after the commit is visible says so, by `publishedActivity`.)
struct InboxWaitIndex {
    static let membershipCap = 5000

    private struct Registration {
        let user: String
        let after: Int64
        var conversations: [Int64] = []
        var watchesEverything = false
        /// Its conversations came from `MembershipCache`, not from a read
        /// made for this wait: they may predate a membership change the
        /// client already saw, whose publication is still to come.
        var usedCachedMemberships = false
    }

    /// What a wait just registered still needs: its user's conversations
    /// when none are kept (`known` nil: read them, then `register`), and a
    /// look at the feed when a commit after its activity may have been
    /// published already.
    struct Admission {
        let known: MembershipCache.Seqs?
        let mustLook: Bool
    }

    private var registrations: [UInt64: Registration] = [:]
    private var byUser: [String: Set<UInt64>] = [:]
    private var byConversation: [Int64: Set<UInt64>] = [:]
    private var watchingEverything: Set<UInt64> = []
    private var memberships = MembershipCache()
    /// The highest activity published; nil when the store does not
    /// promise that every commit is published (then every wait looks).
    private var publishedActivity: Int64?

    init(publishedActivity: Int64?) {
        self.publishedActivity = publishedActivity
    }

    /// Registers a wait under its user; its conversations follow in `register`.
    mutating func insert(_ token: UInt64, user: String, after: Int64) -> Admission {
        registrations[token] = Registration(user: user, after: after)
        byUser[user, default: []].insert(token)
        let known = memberships.seqs(of: user)
        if known == nil { memberships.startLoading(user) }
        return Admission(known: known, mustLook: publishedActivity.map { after < $0 } ?? true)
    }

    /// The user's conversations, read for a wait whose admission had none
    /// (`loaded`: nil when the read failed), kept unless a commit changed
    /// the user meanwhile.
    mutating func finishLoading(_ user: String, with loaded: MembershipCache.Seqs?) {
        memberships.finishLoading(user, with: loaded)
    }

    /// Registers a still parked wait under its conversations (nil, or too
    /// many: under every commit).
    mutating func register(_ token: UInt64, conversations seqs: MembershipCache.Seqs?, cached: Bool) {
        guard var registration = registrations[token] else { return }
        if case .conversations(let list) = seqs {
            for seq in list { byConversation[seq, default: []].insert(token) }
            registration.conversations = list
        } else {
            watchingEverything.insert(token)
            registration.watchesEverything = true
        }
        registration.usedCachedMemberships = cached
        registrations[token] = registration
    }

    /// Removes and returns the waits a commit wakes: `activity` is its last
    /// value, `conversations` the seqs it changed, `users` those whose
    /// marker or memberships it changed.
    ///
    /// A wait of one of `users` that is already past `activity` is woken
    /// too when it took its conversations from the cache: its client saw
    /// this commit before it was published here (another instance's commit
    /// reaches this one through LISTEN, a moment later), so the cached list
    /// may lack a conversation just joined, whose posts would then not wake
    /// it. The wake costs one feed read, which finds nothing and parks again
    /// with the memberships read afresh.
    mutating func woken(byActivity activity: Int64, conversations: Set<Int64>, users: Set<String>) -> [UInt64] {
        if let published = publishedActivity, activity > published { publishedActivity = activity }
        for user in users { memberships.forget(user) }
        guard !registrations.isEmpty else { return [] }
        var tokens = watchingEverything
        for seq in conversations { if let parked = byConversation[seq] { tokens.formUnion(parked) } }
        var usersTokens = Set<UInt64>()
        for user in users { if let parked = byUser[user] { usersTokens.formUnion(parked) } }
        tokens.formUnion(usersTokens)
        var woken: [UInt64] = []
        for token in tokens {
            guard let registration = registrations[token],
                  registration.after < activity || (registration.usedCachedMemberships && usersTokens.contains(token))
            else { continue }
            woken.append(token)
            remove(token)
        }
        return woken
    }

    mutating func remove(_ token: UInt64) {
        guard let registration = registrations.removeValue(forKey: token) else { return }
        Self.removeToken(token, key: registration.user, from: &byUser)
        for seq in registration.conversations { Self.removeToken(token, key: seq, from: &byConversation) }
        if registration.watchesEverything { watchingEverything.remove(token) }
    }

    /// Forgets every wait and every kept membership, and leaves unkept
    /// every read under way (commits may have gone by unheard).
    mutating func removeAll() {
        registrations.removeAll()
        byUser.removeAll()
        byConversation.removeAll()
        watchingEverything.removeAll()
        memberships.forgetAll()
    }

    private static func removeToken<Key: Hashable>(_ token: UInt64, key: Key, from map: inout [Key: Set<UInt64>]) {
        map[key]?.remove(token)
        if map[key]?.isEmpty == true { map[key] = nil }
    }
}
