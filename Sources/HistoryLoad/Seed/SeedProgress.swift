import Dispatch
import Synchronization

/// A progress bar on stderr for seeding: redrawn in place on a terminal,
/// else a plain line every few seconds (CI logs stay short).
final class SeedProgress: Sendable {
    let total: Int
    let enabled: Bool
    private let done = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let startNanos = MonotonicClock.now()
    private let finished = DispatchSemaphore(value: 0)

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func add(_ count: Int) { done.add(count, ordering: .relaxed) }

    /// Starts the drawing thread.
    func start() {
        guard enabled else { return }
        let printer = ProgressPrinter(enabled: true)
        let period: UInt64 = printer.isTerminal ? 200_000_000 : 5_000_000_000
        DispatchQueue.global().async { [self] in
            var next = MonotonicClock.now() + period
            while !stopped.load(ordering: .relaxed) {
                MonotonicClock.sleep(nanoseconds: 50_000_000)
                guard MonotonicClock.now() >= next else { continue }
                next += period
                printer.write(line(printer.isTerminal))
            }
            printer.write(line(printer.isTerminal))
            printer.finish()
            finished.signal()
        }
    }

    func stop() {
        guard enabled else { return }
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }

    private func line(_ bar: Bool) -> String {
        let count = done.load(ordering: .relaxed)
        let fraction = total > 0 ? min(1, Double(count) / Double(total)) : 1
        let seconds = Double(MonotonicClock.now() - startNanos) / 1e9
        let rate = seconds > 0 ? Double(count) / seconds : 0
        let numbers = "\(Format.grouped(count))/\(Format.grouped(total)) messages  \(Format.fixed(rate, 0))/s  \(Format.fixed(seconds, 1)) s"
        guard bar else { return "seed: " + numbers }
        let width = 30
        let filled = Int(fraction * Double(width))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            + Format.fixed(fraction * 100, 0) + "%  " + numbers
    }
}
