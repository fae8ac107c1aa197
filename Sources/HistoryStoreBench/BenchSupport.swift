import Dispatch
import Foundation
import HistoryStore
import Synchronization
import ToolSupport

extension HistoryStore {
    /// The completion-based append, waited for on the calling thread (the
    /// benchmark's appenders are plain threads, like a server's workers).
    func appendAndWait(_ message: NewMessage, to conversation: ConversationID) -> Result<AppendOutcome, StoreError> {
        let done = DispatchSemaphore(value: 0)
        let box = Locked<Result<AppendOutcome, StoreError>?>(nil)
        append(message, to: conversation) { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return box.value!
    }

    func createAndWait(_ id: ConversationID) -> Result<Conversation, StoreError> {
        let done = DispatchSemaphore(value: 0)
        let box = Locked<Result<Conversation, StoreError>?>(nil)
        createConversation(id: id, title: nil) { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

/// Starts `count` threads running `body(index)` and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}

/// Seconds on the monotonic clock that `body` took.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// `1234567.8` as "1,234,568".
func grouped(_ value: Double) -> String {
    let digits = String(Int(value.rounded()))
    var result = ""
    for (offset, character) in digits.reversed().enumerated() {
        if offset > 0, offset % 3 == 0, character != "-" { result.append(",") }
        result.append(character)
    }
    return String(result.reversed())
}

func padded(_ text: String, _ width: Int, left: Bool = false) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return left ? text + padding : padding + text
}

func twoDecimals(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}
