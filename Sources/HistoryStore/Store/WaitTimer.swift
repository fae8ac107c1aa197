import Dispatch
import Synchronization

/// A one-shot dispatch timer for a wait's timeout.
///
/// The use of `@unchecked Sendable` is safe for this type because dispatch
/// sources are thread-safe objects (libdispatch documents `schedule`,
/// `resume` and `cancel` as callable from any thread) and the one stored
/// property is a `let`.
final class TimerBox: @unchecked Sendable {
    private let source: any DispatchSourceTimer
    private let armedFlag = Atomic<Bool>(false)

    init(queue: DispatchQueue) {
        source = DispatchSource.makeTimerSource(queue: queue)
    }

    /// Schedules `handler` once after `timeout` and activates the source;
    /// a source cancelled before this call never fires.
    func arm(after timeout: Duration, handler: @escaping @Sendable () -> Void) {
        source.setEventHandler(handler: handler)
        source.schedule(deadline: .now() + .nanoseconds(Self.nanoseconds(timeout)), leeway: .milliseconds(1))
        armedFlag.store(true, ordering: .releasing)
        source.resume()
    }

    func cancel() {
        source.cancel()
    }

    deinit {
        // libdispatch traps when a never-activated source is released:
        // activate it (already cancelled by then, so it never fires).
        if !armed { source.cancel(); source.resume() }
    }

    private var armed: Bool { armedFlag.load(ordering: .acquiring) }

    private static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        // Contract waits are at most 60 s; a day bounds anything larger.
        let cappedSeconds = min(seconds, 86_400)
        return Int(cappedSeconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }
}
