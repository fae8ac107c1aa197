/// Typing on the front: access decided in a snapshot like a read's, the
/// rest on the backend's `TypingBoard` (memory only, never the database).
extension StoreFront {
    /// The access decision, answered through `completion`: PostgreSQL
    /// gathers the calls of a few milliseconds and decides them in one
    /// statement off the readers' pool (`tellsTypingLater`), SQLite decides
    /// now, in a snapshot like a read's (a stranger gets the answer of a
    /// missing conversation).
    /// The board is told only once access was decided, so a stranger's
    /// call changes nothing.
    public func tellTyping(_ typing: Bool, as user: UserID, in conversation: ConversationID, access: AccessCheck,
                           completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void) {
        let board = backend.typing
        backend.decideTypingAccess(access, to: conversation) { refusal in
            if let refusal { return completion(.failure(refusal)) }
            completion(.success(board.tell(typing, user: user, in: conversation) == .accepted))
        }
    }

    public var tellsTypingLater: Bool { backend.decidesTypingAccessLater }

    public func typers(in conversation: ConversationID) -> [UserID] {
        backend.typing.typers(in: conversation)
    }

    public func observeTyping(in conversation: ConversationID,
                              _ handler: @escaping @Sendable ([UserID]) -> Void) -> TypingObservation {
        backend.typing.observe(conversation, handler)
    }

    public func stopObservingTyping(_ observation: TypingObservation) {
        backend.typing.stopObserving(observation)
    }

    /// The board itself: tests shorten its durations (`use(_:)`) and read its size.
    package var typingBoard: TypingBoard { backend.typing }
}
