import Synchronization

/// The `onClose` handlers of the request a connection is handling.
///
/// Handlers are registered from any thread (a handler may hop to its own
/// queue before it parks a long-poll), so they live in a `Mutex`. They are
/// dropped once the request is answered and run once if the connection
/// closes, or the peer ends its input, before that.
final class CloseWatch: Sendable {
    private struct State {
        var requestNumber = 0
        var answered = true
        var peerGone = false
        var closed = false
        var handlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    func beginRequest(_ requestNumber: Int) {
        state.withLock { state in
            state.requestNumber = requestNumber
            state.answered = false
            state.handlers.removeAll()
        }
    }

    func requestAnswered() {
        state.withLock { state in
            state.answered = true
            state.handlers.removeAll()
        }
    }

    func add(_ handler: @escaping @Sendable () -> Void, requestNumber: Int) {
        let runNow = state.withLock { state -> Bool in
            if state.closed || (state.peerGone && requestNumber == state.requestNumber && !state.answered) { return true }
            guard requestNumber == state.requestNumber, !state.answered else { return false }
            state.handlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// The handlers to run now that the peer has gone or the connection closed.
    func takeHandlers(closing: Bool) -> [@Sendable () -> Void] {
        state.withLock { state in
            if closing { state.closed = true } else { state.peerGone = true }
            let handlers = state.answered ? [] : state.handlers
            state.handlers.removeAll()
            return handlers
        }
    }
}
