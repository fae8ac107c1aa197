import Synchronization

/// The one `HistoryStore` front, over any backend's primitives: the rules
/// every request passes before it reaches the database, the caller's
/// access handed down to be decided in the snapshot or transaction that
/// serves it, waits and their cancellation, and closing.
///
/// `SQLiteHistoryStore` and `PostgresHistoryStore` are this front over
/// their backends, as subclasses that only open them and add what one of
/// them alone can do (a bulk load, an integrity check, whether it hears
/// other instances). `open` only so that those two, in their own modules,
/// can subclass it; nothing overrides the front.
open class StoreFront: HistoryStore, @unchecked Sendable {
    package let backend: any StoreEngine
    private let isClosed = Atomic<Bool>(false)

    package init(backend: any StoreEngine) {
        self.backend = backend
    }

    deinit {
        close()
    }

    // MARK: - Conversations

    public func createConversation(id: ConversationID?, title: String?, owner: UserID?,
                                   completion: @escaping @Sendable (Result<Conversation, StoreError>) -> Void) {
        do {
            try MessageRules.validateTitle(title)
        } catch {
            completion(.failure(error))
            return
        }
        submit(.createConversation(id: id, title: title, owner: owner, completion: completion))
    }

    /// Also teaches the kept versions the version read (`KeptVersions`):
    /// conditional requests read the conversation first, so the next
    /// conditional request for it is decided without a read.
    public func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation {
        guard let kept = backend.keptVersions else {
            guard !closed else { throw .closed }
            return try backend.conversation(id, access: access)
        }
        let ticket = kept.ticket()
        // A user's role as the access check read it, in the same snapshot.
        let (conversation, role) = try read { reads throws(StoreError) in
            try reads.conversationWithRole(id, access: access)
        }
        kept.learn(conversation.version, of: id, ticket: ticket)
        if let user = access.user, let role { kept.learn(role, of: user, in: id, ticket: ticket) }
        return conversation
    }

    public func knownVersion(of conversation: ConversationID) -> Int64? {
        backend.keptVersions?.version(of: conversation)
    }

    public func knownRole(of user: UserID, in conversation: ConversationID) -> MemberRole? {
        backend.keptVersions?.role(of: user, in: conversation)
    }

    // MARK: - Members

    public func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID, access: AccessCheck,
                          completion: @escaping @Sendable (Result<MemberChange, StoreError>) -> Void) {
        submit(.putMember(user, role: role, conversation: conversation, access: access, completion: completion))
    }

    public func removeMember(_ user: UserID, from conversation: ConversationID, access: AccessCheck,
                             completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void) {
        // A member removed while typing leaves the typing list at once.
        submit(.removeMember(user, conversation: conversation, access: access) { [backend] result in
            if case .success(true) = result { backend.typing.forget(user, in: conversation) }
            completion(result)
        })
    }

    public func members(of conversation: ConversationID, after: UserID?, limit: Int,
                        access: AccessCheck) throws(StoreError) -> MemberPage {
        guard MemberPage.limitRange.contains(limit) else {
            throw .invalid(field: .limit, reason: "must be an integer from \(MemberPage.limitRange.lowerBound) to \(MemberPage.limitRange.upperBound)")
        }
        return try read { reads throws(StoreError) in
            try reads.members(of: conversation, after: after, limit: limit, access: access)
        }
    }

    public func role(of user: UserID, in conversation: ConversationID) throws(StoreError) -> MemberRole? {
        try read { reads throws(StoreError) in try reads.role(of: user, in: conversation) }
    }

    // MARK: - Messages

    public func append(_ message: NewMessage, to conversation: ConversationID, access: AccessCheck,
                       completion: @escaping @Sendable (Result<AppendOutcome, StoreError>) -> Void) {
        do {
            try MessageRules.validate(message)
        } catch {
            completion(.failure(error))
            return
        }
        submit(.append(message, conversation: conversation, access: access, completion: completion))
    }

    public func edit(messageID: Int64, in conversation: ConversationID, body: String, access: AccessCheck,
                     completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        do {
            try MessageRules.validateBody(body)
        } catch {
            completion(.failure(error))
            return
        }
        submit(.edit(messageID: messageID, conversation: conversation, body: body, access: access, completion: completion))
    }

    public func delete(messageID: Int64, in conversation: ConversationID, access: AccessCheck,
                       completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        submit(.delete(messageID: messageID, conversation: conversation, access: access, completion: completion))
    }

    public func message(_ messageID: Int64, in conversation: ConversationID,
                        access: AccessCheck) throws(StoreError) -> Message {
        try read { reads throws(StoreError) in try reads.message(messageID, in: conversation, access: access) }
    }

    // MARK: - Reads

    public func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page {
        try checkPageRequest(query)
        return try backend.page(of: conversation, query, access: access)
    }

    public func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck,
                     completion: @escaping @Sendable (Result<Page, StoreError>) -> Void) {
        do throws(StoreError) {
            try checkPageRequest(query)
        } catch {
            completion(.failure(error))
            return
        }
        backend.page(of: conversation, query, access: access, completion: completion)
    }

    public var readsPagesLater: Bool { backend.readsPagesLater }

    /// What both forms of `page` refuse before asking the backend.
    private func checkPageRequest(_ query: PageQuery) throws(StoreError) {
        try query.validate()
        guard !closed else { throw .closed }
    }

    public func changes(in conversation: ConversationID, _ query: ChangeQuery,
                        access: AccessCheck) throws(StoreError) -> ChangeFeed {
        try query.validate()
        return try read { reads throws(StoreError) in try reads.changes(in: conversation, query, access: access) }
    }

    // MARK: - Inbox

    public func markRead(_ user: UserID, in conversation: ConversationID, upTo messageID: Int64, access: AccessCheck,
                         completion: @escaping @Sendable (Result<ReadState, StoreError>) -> Void) {
        do throws(RuleViolation) {
            try ReadState.lastReadIDRule.check(messageID)
        } catch {
            completion(.failure(StoreError(error)))
            return
        }
        submit(.markRead(user, conversation: conversation, upTo: messageID, access: access, completion: completion))
    }

    public func inbox(of user: UserID, _ query: InboxQuery) throws(StoreError) -> InboxPage {
        try query.validate()
        let cursor = try query.decodedCursor()
        return try read { reads throws(StoreError) in try reads.inbox(of: user, limit: query.limit, after: cursor) }
    }

    public func inboxChanges(of user: UserID, _ query: InboxChangeQuery) throws(StoreError) -> InboxChangeFeed {
        try query.validate()
        return try read { reads throws(StoreError) in try reads.inboxChanges(of: user, query) }
    }

    // MARK: - The backend feed

    public func serverChanges(_ query: ServerChangeQuery) throws(StoreError) -> ServerChangeFeed {
        try query.validate()
        return try read { reads throws(StoreError) in try reads.serverChanges(query) }
    }

    public func waitForServerChange(after activity: Int64, timeout: Duration,
                                    handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        backend.waiters.wait(for: .server(after: activity), timeout: timeout, lookups: FrontLookups(front: self),
                             handler: handler)
    }

    // MARK: - Wake-ups

    public func waitForChange(in conversation: ConversationID, after version: Int64, ids: ClosedRange<Int64>?,
                              timeout: Duration, handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        backend.waiters.wait(for: .conversation(conversation, after: version, ids: ids), timeout: timeout,
                             lookups: FrontLookups(front: self), handler: handler)
    }

    public func waitForInboxChange(of user: UserID, after activity: Int64, timeout: Duration,
                                   handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        backend.waiters.wait(for: .inbox(user, after: activity), timeout: timeout, lookups: FrontLookups(front: self),
                             handler: handler)
    }

    public func observeUserChanges(_ handler: @escaping @Sendable (Set<UserID>?) -> Void) {
        backend.waiters.observeUserChanges(handler)
    }

    /// Any kind of wait: one table holds them all.
    public func cancelWait(_ token: WaitToken) {
        backend.waiters.cancel(token)
    }

    public var parkedWaitCount: Int {
        backend.waiters.parkedCount
    }

    // MARK: - Lifecycle

    public func ping() throws(StoreError) {
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        try backend.ping()
    }

    /// Refuses new work, writes and answers what is queued, answers parked
    /// waits `.closing`, then closes every connection. Idempotent.
    public func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        backend.finishWrites()
        backend.waiters.close()
        backend.typing.close()
        backend.close()
    }

    /// True once `close()` began: the backend's own entry points (a bulk
    /// load) refuse work from then on, as the front's do.
    package var closed: Bool { isClosed.load(ordering: .acquiring) }

    // MARK: - Private

    private func submit(_ request: WriteRequest) {
        guard !closed else {
            request.fail(.closed)
            return
        }
        backend.submit(request)
    }

    package func read<T>(_ body: (any SnapshotReads) throws(StoreError) -> T) throws(StoreError) -> T {
        guard !closed else { throw .closed }
        return try backend.read(body)
    }
}

/// The reads a parked wait makes through the front: each in a snapshot of
/// its own, nil when it fails (the wait then ends by a commit, its timeout
/// or close).
private struct FrontLookups: WaitLookups {
    let front: StoreFront

    func version(of conversation: ConversationID) -> Int64? {
        try? front.conversation(conversation).version
    }

    func activity() -> Int64? {
        try? front.read { reads throws(StoreError) in try reads.currentActivity() }
    }

    func membershipSeqs(of user: UserID, limit: Int) -> [Int64]? {
        try? front.read { reads throws(StoreError) in try reads.membershipSeqs(of: user, limit: limit) }
    }

    func hasInboxChanges(of user: UserID, after activity: Int64) -> Bool? {
        try? front.read { reads throws(StoreError) in try reads.hasInboxChanges(of: user, after: activity) }
    }
}
