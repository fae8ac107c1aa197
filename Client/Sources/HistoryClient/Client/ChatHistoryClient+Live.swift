import Foundation

/// The calls of the contract's "Live" section beside the feeds: one
/// message, a page around a time, and typing.
extension ChatHistoryClient {
    /// `GET /v1/conversations/{id}/messages/{messageID}`: one message as
    /// it is now, a tombstone too (a reply's preview, a notification).
    /// A message that does not exist in this conversation throws
    /// `.server` with code ``HistoryErrorCode/messageNotFound`` (404):
    ///
    /// ```swift
    /// do {
    ///     let original = try await client.message(id: reply.replyTo!, in: "general")
    /// } catch let error as HistoryClientError where error.code == .messageNotFound {
    ///     showOriginalGone()
    /// }
    /// ```
    public func message(id messageID: Int64, in conversation: String) async throws -> HistoryMessage {
        let endpoint = HistoryEndpoint(
            method: "GET", path: ["v1", "conversations", conversation, "messages", String(messageID)],
            revalidates: true)
        return try await send(endpoint, as: HistoryMessage.self).value
    }

    /// `GET .../messages?around_time=T`: the page around the first message
    /// created at or after `time` (its ``HistoryPage/anchor``), or the
    /// newest page with the anchor not found when no message is that
    /// recent. The same shape as ``PageCursor/around(_:)``; the jump of a
    /// date picker. ``WindowIntent/jumpToDate(_:)`` is the same for a window.
    public func page(of conversation: String, aroundTime time: Date, limit: Int? = nil) async throws -> HistoryPage {
        try await page(of: conversation, .aroundTime(time, limit: limit))
    }

    /// `PUT /v1/conversations/{id}/typing` `{"typing": ...}`, under the
    /// contract's 2 s rule kept here (``TypingThrottle``): call it on every
    /// keystroke with `true` and with `false` when the user stops (clears
    /// the draft, sends); the client sends a `true` at most every 4 s and
    /// no call until 2 s after the last one's answer, so the server never
    /// drops a `false` (a call that must wait waits, and gives way to a
    /// newer call made meanwhile).
    ///
    /// Returns whether a request was sent. A stranger to the conversation
    /// gets ``HistoryErrorCode/conversationNotFound``.
    @discardableResult
    public func setTyping(_ typing: Bool, in conversation: String) async throws -> Bool {
        let generation = typingState.withLock { state -> UInt64 in
            state.generations[conversation, default: 0] += 1
            return state.generations[conversation, default: 0]
        }
        let template = configuration.typingThrottle
        while true {
            let now = ContinuousClock.now
            let (decision, previous) = typingState.withLock { state -> (TypingThrottle.Decision, TypingThrottle?) in
                // A newer call decides instead of this one.
                guard state.generations[conversation] == generation else { return (.skip, nil) }
                let throttle = state.throttles[conversation] ?? template
                let decision = throttle.decide(typing, at: now)
                if decision == .send {
                    state.throttles[conversation, default: template].didSend(typing, at: now)
                }
                return (decision, throttle)
            }
            switch decision {
            case .skip:
                return false
            case .wait(let delay):
                // In short steps: a newer call ends this one at its next
                // look, not after the whole wait (up to the 2 s rule).
                try await Task.sleep(for: min(delay, .milliseconds(50)))
            case .send:
                do {
                    let endpoint = HistoryEndpoint(
                        method: "PUT", path: ["v1", "conversations", conversation, "typing"],
                        body: try encode(TypingBody(typing: typing)))
                    _ = try await perform(endpoint)
                    let answered = ContinuousClock.now
                    typingState.withLock { $0.throttles[conversation]?.didAnswer(at: answered) }
                    return true
                } catch {
                    let failed = ContinuousClock.now
                    typingState.withLock { state in
                        if Self.typingCallMayHaveLanded(error) {
                            state.throttles[conversation]?.didLoseAnswer(at: failed)
                        } else if let previous {
                            state.throttles[conversation]?.restore(previous)
                        }
                    }
                    throw error
                }
            }
        }
    }

    /// Whether a typing call that threw may have been accepted all the
    /// same: no answer (it may have arrived, its answer lost), a 5xx (a
    /// gateway's timeout over a server that accepted), or cancellation
    /// (it may have left). A 4xx is the server's refusal, before anything
    /// changed, and the other errors come before the request leaves.
    static func typingCallMayHaveLanded(_ error: any Error) -> Bool {
        guard let error = error as? HistoryClientError else { return error is CancellationError }
        switch error {
        case .transport: return true
        case .server, .undecodableResponse: return (error.status ?? 500) >= 500
        case .invalidRequest, .tokenUnavailable, .streamingUnavailable: return false
        }
    }
}

/// What ``ChatHistoryClient/setTyping(_:in:)`` remembers between calls.
struct TypingState: Sendable {
    var throttles: [String: TypingThrottle] = [:]
    /// Counts calls per conversation, so one that waited knows whether a newer one came.
    var generations: [String: UInt64] = [:]
}

private struct TypingBody: Encodable {
    var typing: Bool
}
