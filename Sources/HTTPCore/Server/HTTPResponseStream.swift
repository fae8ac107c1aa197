import Dispatch
import Synchronization

/// The body of a response written over time (Server-Sent Events): set it
/// as `HTTPResponse.stream`, answer, then `write` pieces from any thread
/// and `finish` once.
///
/// The connection sends the head without `Content-Length` and with
/// `Connection: close`: the body ends when the connection does, so the
/// connection is never reused after a stream (HTTP/1.0 and 1.1 alike). A
/// `HEAD` request gets the head only; its stream is closed at once.
///
/// Nothing here buffers without bound: pieces wait in the connection's
/// output, under its write timeout (a peer that stops reading is cut off
/// like any other), and a writer that waits for `drained` before its next
/// piece never holds more than one piece.
///
/// ```swift
/// let body = HTTPResponseStream()
/// respond(HTTPResponse(status: .ok, headers: ["Content-Type": "text/event-stream"], stream: body))
/// body.write(Array("data: 1\n\n".utf8)) { written in if written { /* next piece */ } }
/// body.finish()
/// ```
public final class HTTPResponseStream: Sendable {
    private struct Piece {
        var bytes: [UInt8]
        var drained: (@Sendable (Bool) -> Void)?
    }

    private struct State {
        /// Set once the connection wrote the head.
        var connection: HTTPConnection?
        /// Written before the head was: sent right after it.
        var pending: [Piece] = []
        var finished = false
        /// The connection closed, or the response never streamed (HEAD).
        var closed = false
    }

    private let state = Mutex(State())

    public init() {}

    /// Queues `bytes` behind everything written before. `drained`, when
    /// given, runs once, on the connection's thread (it must not block):
    /// `true` when these bytes and all before them reached the socket,
    /// `false` when the connection closed first (or the stream was never
    /// sent: a `HEAD` request). A write after the close only reports `false`.
    public func write(_ bytes: [UInt8], drained: (@Sendable (Bool) -> Void)? = nil) {
        let connection: HTTPConnection? = state.withLock { state in
            if state.closed || state.finished { return nil }
            if state.connection == nil {
                state.pending.append(Piece(bytes: bytes, drained: drained))
                return nil
            }
            return state.connection
        }
        guard let connection else {
            if isClosed || state.withLock({ $0.finished }) { drained?(false) }
            return
        }
        connection.schedule { connection.streamWrite(bytes, drained: drained) }
    }

    /// Ends the body: the connection closes once what was written reached
    /// the socket. Later calls do nothing.
    public func finish() {
        let connection: HTTPConnection? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            return state.connection
        }
        guard let connection else { return }
        connection.schedule { connection.streamFinish() }
    }

    /// The connection is gone (or never streamed): every write from now on reports `false`.
    public var isClosed: Bool { state.withLock { $0.closed } }

    // MARK: - The connection's side

    /// The head is queued (on the connection's thread): pieces written so
    /// far follow it now, in order; later ones are scheduled on the
    /// connection and come after them. Nil: the response is not streamed (a `HEAD` request).
    func attach(_ connection: HTTPConnection?) {
        let (pending, finished) = state.withLock { state in
            let pending = state.pending
            state.pending = []
            if let connection { state.connection = connection } else { state.closed = true }
            return (pending, state.finished)
        }
        guard let connection else {
            for piece in pending { piece.drained?(false) }
            return
        }
        for piece in pending { connection.streamWrite(piece.bytes, drained: piece.drained) }
        if finished { connection.streamFinish() }
    }

    /// The connection closed: drop it (and the cycle through it).
    func connectionClosed() {
        let pending = state.withLock { state in
            state.closed = true
            state.connection = nil
            let pending = state.pending
            state.pending = []
            return pending
        }
        for piece in pending { piece.drained?(false) }
    }
}
