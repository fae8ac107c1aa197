import Dispatch
import Foundation
import HTTPCore
import HistoryAPI

// history-server: read the configuration, open the store, listen, print one
// line, and serve until SIGTERM or SIGINT.

/// Writes straight to a file descriptor: the ready line must be on stdout
/// before anyone could act on it, and stdio buffering must not reorder it
/// with the access log (which writes to fd 1 too).
func writeLine(_ text: String, to fileDescriptor: Int32) {
    var bytes = Array(text.utf8)
    bytes.append(UInt8(ascii: "\n"))
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

// A client that goes away mid-response must cost an EPIPE, not the process.
signal(SIGPIPE, SIG_IGN)

let command: ServerConfiguration.Command
do {
    command = try ServerConfiguration.parse(arguments: Array(CommandLine.arguments.dropFirst()),
                                            environment: ProcessInfo.processInfo.environment)
} catch {
    writeLine("history-server: error: \(error.message)\nSee 'history-server --help'.", to: STDERR_FILENO)
    exit(2)
}

guard case .run(let configuration) = command else {
    writeLine(ServerConfiguration.usage, to: STDOUT_FILENO)
    exit(0)
}

// Each connection is a descriptor; a few more go to SQLite and the listener.
let descriptorLimit = raiseOpenFileLimit()
if descriptorLimit >= 0 && descriptorLimit < configuration.maximumConnections + 64 {
    writeLine("history-server: warning: the open-file limit is \(descriptorLimit), below --max-connections "
              + "\(configuration.maximumConnections); raise it (ulimit -n) or expect refused connections",
              to: STDERR_FILENO)
}

let application: HistoryApplication
do {
    application = try HistoryApplication(configuration: configuration)
} catch {
    writeLine("history-server: error: cannot open the database \(configuration.databasePath): \(error)", to: STDERR_FILENO)
    exit(1)
}

do {
    try application.start()
} catch {
    writeLine("history-server: error: cannot listen on \(configuration.host):\(configuration.port): \(error)", to: STDERR_FILENO)
    exit(1)
}

let signalSources = Shutdown(application: application).install()
writeLine(application.startupLine, to: STDOUT_FILENO)
dispatchMain()
