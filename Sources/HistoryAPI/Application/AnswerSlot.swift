import HTTPCore
import Synchronization

/// Turns the router's single answer callback into the responder's result:
/// an answer given while the route's handler still runs is returned as
/// `.response` (the page read's fast path, no hop), one given after it
/// returned goes to the connection's `respond`. A lock, not the identity of
/// the thread, decides which came first.
final class AnswerSlot: Sendable {
    private enum State {
        case handling
        case answered(HTTPResponse)
        case deferred
        case delivered
    }

    private let state = Mutex(State.handling)
    private let respond: @Sendable (HTTPResponse) -> Void

    init(respond: @escaping @Sendable (HTTPResponse) -> Void) {
        self.respond = respond
    }

    /// The route's answer, from any thread; only the first counts.
    func send(_ response: HTTPResponse) {
        let late = state.withLock { state -> Bool in
            switch state {
            case .handling:
                state = .answered(response)
                return false
            case .deferred:
                state = .delivered
                return true
            case .answered, .delivered:
                return false
            }
        }
        if late { respond(response) }
    }

    /// The route's handler returned: its answer if it gave one, else `.later`.
    func handlerReturned() -> HTTPResponderResult {
        state.withLock { state in
            if case .answered(let response) = state {
                state = .delivered
                return .response(response)
            }
            state = .deferred
            return .later
        }
    }
}
