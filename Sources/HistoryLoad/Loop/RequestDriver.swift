import HTTPCore

/// A request a callback-driven user hands to its driver.
struct LoadRequest {
    var method: HTTPMethod = .get
    var target: String
    var body: [UInt8] = []
    var kind: RequestKind
    var accepted: ClosedRange<Int> = 200...299
    /// A page's `ETag` the user holds: sent as `If-None-Match` (a 304 then
    /// answers it). nil: an unconditional request.
    var ifNoneMatch: String? = nil
    /// When the request is due, from ``RequestDriver/takeSlot()``: the driver
    /// sends it then and times it from then. nil takes the next slot now.
    var start: UInt64? = nil
}

/// Sends one user's requests, one at a time, and hands each answer back on
/// the thread that runs the user: a blocking connection on a thread of its
/// own (``BlockingDriver``), or a non-blocking one on an event loop
/// (``LoopConnection``). Users written against it run on either.
protocol RequestDriver: AnyObject {
    /// The due time of the user's next request: its open-loop slot when paced, else now.
    func takeSlot() -> UInt64

    /// Sends `request` when it is due; `then` gets the answer (recorded
    /// already), or nil after a transport failure (counted already). Never
    /// calls `then` before returning, and never once the run has ended:
    /// a user that stops being called back has stopped.
    func send(_ request: LoadRequest, then: @escaping (HTTPClientResponse?) -> Void)
}

/// A virtual user written as callbacks: `run` starts its next action, and
/// the handler of each answer either sends the next request or calls `run`
/// again, so a loop thread can drive thousands of them.
protocol CallbackUser: AnyObject {
    func run(_ context: UserContext)
}

/// Drives a ``CallbackUser`` on the calling thread over a blocking
/// ``LoadConnection``: each `send` is parked, then performed by `drive`'s
/// loop (a trampoline, so a long run does not grow the stack).
final class BlockingDriver: RequestDriver {
    let connection: LoadConnection
    let control: RunControl
    private var pending: (request: LoadRequest, then: (HTTPClientResponse?) -> Void)?

    init(connection: LoadConnection, control: RunControl) {
        self.connection = connection
        self.control = control
    }

    func takeSlot() -> UInt64 {
        guard var pacer = connection.pacer else { return MonotonicClock.now() }
        defer { connection.pacer = pacer }
        return pacer.takeSlot()
    }

    func send(_ request: LoadRequest, then: @escaping (HTTPClientResponse?) -> Void) {
        pending = (request, then)
    }

    func drive(_ user: any CallbackUser, _ context: UserContext) {
        user.run(context)
        while let (request, then) = pending, control.shouldContinue {
            pending = nil
            let start = request.start ?? takeSlot()
            MonotonicClock.sleep(until: start)
            let response = connection.perform(request.method, request.target, body: request.body, kind: request.kind,
                                              accepted: request.accepted, start: start, ifNoneMatch: request.ifNoneMatch)
            then(response)
        }
        pending = nil
    }
}
