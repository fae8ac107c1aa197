import Dispatch

/// A dispatch timer that fires every `interval` until cancelled: the
/// typing board's sweep.
///
/// The use of `@unchecked Sendable` is safe for this type because dispatch
/// sources are thread-safe objects (libdispatch documents `schedule`,
/// `resume` and `cancel` as callable from any thread) and the one stored
/// property is a `let`.
final class RepeatingTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer

    /// Starts at once; `handler` runs on `queue`.
    init(queue: DispatchQueue, every interval: Duration, handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.setEventHandler(handler: handler)
        source.schedule(deadline: .now() + Self.dispatchInterval(interval), repeating: Self.dispatchInterval(interval),
                        leeway: .milliseconds(5))
        source.resume()
    }

    /// From now on every `interval` instead.
    func reschedule(every interval: Duration) {
        source.schedule(deadline: .now() + Self.dispatchInterval(interval), repeating: Self.dispatchInterval(interval),
                        leeway: .milliseconds(2))
    }

    func cancel() {
        source.cancel()
    }

    deinit {
        source.cancel()
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
