import ArgumentParser
import Foundation
import HistoryStore
import HistorySQLite
#if canImport(Glibc)
import Glibc
#endif

/// The process the crash test kills: appends forever from several threads
/// and prints each acknowledged id on its own line, flushed, only after the
/// store answered (that is, after the batch was durable).
struct CrashChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-child",
        abstract: "Append forever and print each acknowledged id (for the kill -9 test).",
        shouldDisplay: false
    )

    @Option(help: "The SQLite file to append to.")
    var database: String

    @Option(help: "Concurrent appending threads.")
    var threads: Int = 4

    func validate() throws {
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
    }

    func run() throws {
        let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: database, durability: .full))
        let conversation = ConversationID("crash")!
        switch store.createAndWait(conversation) {
        case .success, .failure(.conversationExists):
            break
        case .failure(let error):
            throw ValidationError("cannot create the conversation: \(error)")
        }
        for thread in 0..<threads {
            Thread {
                var index = 0
                while true {
                    index += 1
                    let message = NewMessage(sender: "child-\(thread)", body: "append \(index) from thread \(thread)",
                                             clientID: "t\(thread)-\(index)")
                    switch store.appendAndWait(message, to: conversation) {
                    case .success(let outcome):
                        // One write(2) per line: at most a few bytes, so the
                        // pipe receives it whole (POSIX: atomic below PIPE_BUF).
                        let line = Array("\(outcome.message.id)\n".utf8)
                        _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
                    case .failure(let error):
                        FileHandle.standardError.write(Data("append failed: \(error)\n".utf8))
                        Glibc.exit(1)
                    }
                }
            }.start()
        }
        while true { sleep(60) }
    }
}
