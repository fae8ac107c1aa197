import Foundation
import HistoryStore
import Synchronization

/// A real SQLite store whose page reads of one conversation stop at a gate
/// until the test opens it: a read that is slow for as long as the test
/// wants, with no timing involved. Every other call goes straight through.
final class GatedStore: HistoryStore {
    /// The conversation whose page reads wait.
    let gatedConversation: ConversationID
    private let inner: any HistoryStore
    private let state = Mutex((open: false, entered: 0, threads: [String]()))
    private let opened = DispatchSemaphore(value: 0)

    /// Whether `knownVersion` answers the inner store's kept versions
    /// (else nil: every conditional request is read).
    private let keepsVersions: Bool

    init(_ inner: any HistoryStore, gating conversation: ConversationID, keepsVersions: Bool = false) {
        self.inner = inner
        gatedConversation = conversation
        self.keepsVersions = keepsVersions
    }

    func knownVersion(of conversation: ConversationID) -> Int64? {
        keepsVersions ? inner.knownVersion(of: conversation) : nil
    }

    func knownRole(of user: UserID, in conversation: ConversationID) -> MemberRole? {
        keepsVersions ? inner.knownRole(of: user, in: conversation) : nil
    }

    /// Page reads of the gated conversation that reached the gate so far.
    var enteredCount: Int { state.withLock { $0.entered } }

    /// The names of the threads that reached the gate, in order.
    var enteredThreads: [String] { state.withLock { $0.threads } }

    /// The kernel's name of this thread (Foundation's `Thread.name` is
    /// not it on Linux).
    private static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Lets every waiting and later read through.
    func open() {
        let waiting = state.withLock { state -> Int in
            guard !state.open else { return 0 }
            state.open = true
            return state.entered
        }
        for _ in 0..<waiting { opened.signal() }
    }

    /// Through the gate as well, answered before returning.
    func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck,
              completion: @escaping @Sendable (Result<Page, StoreError>) -> Void) {
        completion(Result { () throws(StoreError) in try page(of: conversation, query, access: access) })
    }

    var readsPagesLater: Bool { false }

    func page(of conversation: ConversationID, _ query: PageQuery, access: AccessCheck) throws(StoreError) -> Page {
        if conversation == gatedConversation {
            let thread = Self.threadName()
            let wait = state.withLock { state -> Bool in
                state.entered += 1
                state.threads.append(thread)
                return !state.open
            }
            if wait { opened.wait() }
        }
        return try inner.page(of: conversation, query, access: access)
    }

    func createConversation(id: ConversationID?, title: String?, owner: UserID?,
                            completion: @escaping @Sendable (Result<Conversation, StoreError>) -> Void) {
        inner.createConversation(id: id, title: title, owner: owner, completion: completion)
    }

    func conversation(_ id: ConversationID, access: AccessCheck) throws(StoreError) -> Conversation {
        try inner.conversation(id, access: access)
    }

    func putMember(_ user: UserID, role: MemberRole, in conversation: ConversationID, access: AccessCheck,
                   completion: @escaping @Sendable (Result<MemberChange, StoreError>) -> Void) {
        inner.putMember(user, role: role, in: conversation, access: access, completion: completion)
    }

    func removeMember(_ user: UserID, from conversation: ConversationID, access: AccessCheck,
                      completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void) {
        inner.removeMember(user, from: conversation, access: access, completion: completion)
    }

    func members(of conversation: ConversationID, after: UserID?, limit: Int,
                 access: AccessCheck) throws(StoreError) -> MemberPage {
        try inner.members(of: conversation, after: after, limit: limit, access: access)
    }

    func role(of user: UserID, in conversation: ConversationID) throws(StoreError) -> MemberRole? {
        try inner.role(of: user, in: conversation)
    }

    func append(_ message: NewMessage, to conversation: ConversationID, access: AccessCheck,
                completion: @escaping @Sendable (Result<AppendOutcome, StoreError>) -> Void) {
        inner.append(message, to: conversation, access: access, completion: completion)
    }

    func edit(messageID: Int64, in conversation: ConversationID, body: String, access: AccessCheck,
              completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        inner.edit(messageID: messageID, in: conversation, body: body, access: access, completion: completion)
    }

    func delete(messageID: Int64, in conversation: ConversationID, access: AccessCheck,
                completion: @escaping @Sendable (Result<Message, StoreError>) -> Void) {
        inner.delete(messageID: messageID, in: conversation, access: access, completion: completion)
    }

    func message(_ messageID: Int64, in conversation: ConversationID, access: AccessCheck) throws(StoreError) -> Message {
        try inner.message(messageID, in: conversation, access: access)
    }

    func changes(in conversation: ConversationID, _ query: ChangeQuery, access: AccessCheck) throws(StoreError) -> ChangeFeed {
        try inner.changes(in: conversation, query, access: access)
    }

    func markRead(_ user: UserID, in conversation: ConversationID, upTo messageID: Int64, access: AccessCheck,
                  completion: @escaping @Sendable (Result<ReadState, StoreError>) -> Void) {
        inner.markRead(user, in: conversation, upTo: messageID, access: access, completion: completion)
    }

    func inbox(of user: UserID, _ query: InboxQuery) throws(StoreError) -> InboxPage { try inner.inbox(of: user, query) }

    func inboxChanges(of user: UserID, _ query: InboxChangeQuery) throws(StoreError) -> InboxChangeFeed {
        try inner.inboxChanges(of: user, query)
    }

    func waitForInboxChange(of user: UserID, after activity: Int64, timeout: Duration,
                            handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        inner.waitForInboxChange(of: user, after: activity, timeout: timeout, handler: handler)
    }

    func waitForChange(in conversation: ConversationID, after version: Int64, ids: ClosedRange<Int64>?,
                       timeout: Duration, handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        inner.waitForChange(in: conversation, after: version, ids: ids, timeout: timeout, handler: handler)
    }

    func serverChanges(_ query: ServerChangeQuery) throws(StoreError) -> ServerChangeFeed {
        try inner.serverChanges(query)
    }

    func waitForServerChange(after activity: Int64, timeout: Duration,
                             handler: @escaping @Sendable (WaitOutcome) -> Void) -> WaitToken {
        inner.waitForServerChange(after: activity, timeout: timeout, handler: handler)
    }

    func cancelWait(_ token: WaitToken) { inner.cancelWait(token) }

    var parkedWaitCount: Int { inner.parkedWaitCount }

    func close() {
        open()
        inner.close()
    }
}
