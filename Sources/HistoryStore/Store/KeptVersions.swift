import Synchronization

/// Each conversation's version as committed, kept in memory by a store
/// whose one writer makes every commit (SQLite: one server process owns
/// its file), so that a conditional GET is decided without a read.
///
/// Why: a page's `ETag` is its conversation's version and its query
/// (`EntityTag.page`), so a client's `If-None-Match` naming the kept
/// version is a 304 on the event loop. Deciding it on the read pool, from
/// the conversation's row, cost about half a page's CPU (the pool's two
/// hand-offs and a read transaction; docs/performance.md, "A 304 from kept
/// versions"); issue 27 asks for a quarter.
///
/// A kept version is never behind what a reader can see, so a 304 from it
/// is never stale:
/// - the writer marks each version its batch writes *before* COMMIT
///   (`willCommit`): until the commit the kept version is ahead of the
///   file's, a tag of the older version does not match, and the request is
///   read as before;
/// - a batch that fails forgets everything (`forgetAll`): what it marked
///   was never committed;
/// - a read teaches the version it read (`learn`) only where nothing is
///   kept for the conversation and no mark and no reset came between the
///   read's start (`ticket`) and its end: a read overtaken by a commit is
///   not kept, and a kept version is only replaced by the writer.
/// Ahead costs a read; behind would answer a stale 304.
///
/// Members' roles are kept beside the versions, for a user's 304 (access
/// is decided from the kept role as a read would decide it from the role in
/// its snapshot). A role may be kept only while it is what a reader sees:
/// after a COMMIT that changed a conversation's memberships, and before its
/// callers are answered, the writer forgets that conversation's roles
/// (`committed(membershipsOf:)`) and moves the generation, so a role read
/// before the change and kept meanwhile is dropped, and one read before it
/// and kept later is refused. Between the COMMIT and that call a removal is
/// not yet answered: a request then is concurrent with it.
///
/// Bounded: past `capacity` conversations (or roles) the writer's next
/// mark starts over (only the writer resets, so no uncommitted mark is
/// ever dropped).
package final class KeptVersions: Sendable {
    private struct State {
        var versions: [String: Int64] = [:]
        /// Conversation -> user -> role, members only.
        var roles: [String: [String: MemberRole]] = [:]
        var roleCount = 0
        /// Moves at every mark and reset: a read whose ticket is older was overtaken.
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    private let capacity: Int

    package init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    /// The conversation's version when kept; nil: read it.
    package func version(of conversation: ConversationID) -> Int64? {
        state.withLock { $0.versions[conversation.rawValue] }
    }

    /// The user's role in the conversation when kept (a member's); nil: read it.
    package func role(of user: UserID, in conversation: ConversationID) -> MemberRole? {
        state.withLock { $0.roles[conversation.rawValue]?[user.rawValue] }
    }

    /// Taken before a read's snapshot begins, handed back to `learn`.
    package func ticket() -> UInt64 {
        state.withLock { $0.generation }
    }

    /// Keeps `version`, read in a snapshot that began after `ticket` was
    /// taken, unless a version is kept already or a commit may have
    /// overtaken the read.
    package func learn(_ version: Int64, of conversation: ConversationID, ticket: UInt64) {
        state.withLock { state in
            guard state.generation == ticket, state.versions.count < capacity,
                  state.versions[conversation.rawValue] == nil else { return }
            state.versions[conversation.rawValue] = version
        }
    }

    /// Keeps `role`, read with the version in a snapshot that began after
    /// `ticket` was taken, under the same conditions as `learn`.
    package func learn(_ role: MemberRole, of user: UserID, in conversation: ConversationID, ticket: UInt64) {
        state.withLock { state in
            guard state.generation == ticket, state.roleCount < capacity,
                  state.roles[conversation.rawValue]?[user.rawValue] == nil else { return }
            state.roles[conversation.rawValue, default: [:]][user.rawValue] = role
            state.roleCount += 1
        }
    }

    /// The writer, after a COMMIT that changed these conversations'
    /// memberships and before its callers are answered.
    package func committed(membershipsOf conversations: some Sequence<ConversationID>) {
        state.withLock { state in
            state.generation &+= 1
            for conversation in conversations {
                state.roleCount -= state.roles.removeValue(forKey: conversation.rawValue)?.count ?? 0
            }
        }
    }

    /// The writer, before the COMMIT that writes these versions.
    package func willCommit(_ versions: some Sequence<(ConversationID, Int64)>) {
        state.withLock { state in
            state.generation &+= 1
            if state.versions.count >= capacity { state.versions.removeAll(keepingCapacity: true) }
            if state.roleCount >= capacity {
                state.roles.removeAll(keepingCapacity: true)
                state.roleCount = 0
            }
            for (conversation, version) in versions {
                state.versions[conversation.rawValue] = max(version, state.versions[conversation.rawValue] ?? .min)
            }
        }
    }

    /// The writer, after a batch failed: what it marked was never committed.
    package func forgetAll() {
        state.withLock { state in
            state.generation &+= 1
            state.versions.removeAll(keepingCapacity: true)
            state.roles.removeAll(keepingCapacity: true)
            state.roleCount = 0
        }
    }

    /// Runs the writer's `body`, a transaction that may mark versions,
    /// and forgets everything when it fails: its COMMIT may not have happened.
    package func forgottenOnFailure<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        do {
            return try body()
        } catch {
            forgetAll()
            throw error
        }
    }

    package var count: Int {
        state.withLock { $0.versions.count }
    }
}
