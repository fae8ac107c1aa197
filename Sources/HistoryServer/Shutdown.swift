import Dispatch
import Foundation
import HistoryAPI
import HistoryWiring
import Synchronization

/// SIGTERM and SIGINT end the server gracefully: stop accepting, answer
/// parked long-polls, let requests in flight finish (at most 5 s), close the
/// store, exit 0. A second signal during the drain exits at once (1): the
/// person pressing Ctrl-C twice means it.
///
/// Signals arrive through `DispatchSourceSignal` on the main queue, after
/// `signal(_, SIG_IGN)` turns the default action (die at once) off; the
/// handler therefore runs as ordinary code, where locks and I/O are allowed,
/// which a C signal handler could not do.
final class Shutdown: Sendable {
    static let gracePeriod: Duration = .seconds(5)

    private let application: HistoryApplication
    private let started = Atomic<Bool>(false)

    init(application: HistoryApplication) {
        self.application = application
    }

    /// Returns the dispatch sources, which must stay alive to keep delivering:
    /// `main` holds them for the life of the process.
    func install() -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler { [self] in received(signalNumber) }
            source.resume()
            return source
        }
    }

    private func received(_ signalNumber: Int32) {
        guard !started.exchange(true, ordering: .relaxed) else {
            application.logger.warning("second signal \(signalNumber): exiting without finishing the drain")
            exit(1)
        }
        application.logger.info("signal \(signalNumber) received")
        application.shutdown(gracePeriod: Self.gracePeriod) {
            exit(0)
        }
    }
}
