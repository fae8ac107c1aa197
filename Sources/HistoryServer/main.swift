import Dispatch
import Foundation
import HTTPCore
import HistoryWiring

// history-server: read the configuration, open the store, listen, print one
// line, and serve until SIGTERM or SIGINT.

/// Writes straight to a file descriptor: the ready line must be on stdout
/// before anyone could act on it, and stdio buffering must not reorder it
/// with the access log (which writes to fd 1 too).
func writeLine(_ text: String, to fileDescriptor: Int32) {
    var bytes = Array(text.utf8)
    bytes.append(UInt8(ascii: "\n"))
    bytes.withUnsafeBytes { buffer in try? writeAll(buffer, to: fileDescriptor) }
}

// A client that goes away mid-response must cost an EPIPE, not the process.
signal(SIGPIPE, SIG_IGN)

var configuration: ServerConfiguration
do {
    switch try ServerLaunch(arguments: Array(CommandLine.arguments.dropFirst()),
                            environment: ProcessInfo.processInfo.environment) {
    case .run(let requested):
        configuration = requested
    case .help(let text):
        writeLine(text, to: STDOUT_FILENO)
        exit(0)
    }
} catch {
    writeLine("history-server: error: \(error.message) (see 'history-server --help')", to: STDERR_FILENO)
    exit(2)
}

// Each connection is a descriptor. The rest of the process needs about 30
// (SQLite's files for the writer and each reader, the epoll sets, the
// listener, stdio, Dispatch's own); 64 leaves room to spare.
let descriptorReserve = 64
let descriptorLimit = raiseOpenFileLimit()
switch connectionLimit(requested: configuration.maximumConnections, descriptorLimit: descriptorLimit,
                       reserve: descriptorReserve) {
case nil:
    writeLine("history-server: error: the open-file limit is \(descriptorLimit); it must be at least "
              + "\(descriptorReserve + minimumUsefulConnections) (raise it with ulimit -n)", to: STDERR_FILENO)
    exit(1)
case let limit? where limit < configuration.maximumConnections:
    writeLine("history-server: warning: the open-file limit is \(descriptorLimit), so at most \(limit) connections "
              + "are served instead of --max-connections \(configuration.maximumConnections) (more get 503); "
              + "raise it with ulimit -n", to: STDERR_FILENO)
    configuration.maximumConnections = limit
default:
    break
}

let application: HistoryApplication
do {
    application = try HistoryApplication(configuration: configuration)
} catch {
    switch error {
    case .configuration(let error):
        // Like a bad flag: the settings cannot work, so one line and status 2.
        writeLine("history-server: error: \(error.message)", to: STDERR_FILENO)
        exit(2)
    case .store(let error):
        // libpq's messages span lines ("... failed: ...\n\tIs the server
        // running ...?"): one line, like every other start-up error.
        let reason = "\(error)".split(whereSeparator: \.isNewline)
            .map { $0.trimmingPrefix(while: \.isWhitespace) }.joined(separator: " ")
        writeLine("history-server: error: cannot open the database \(configuration.displayedDatabase): \(reason)", to: STDERR_FILENO)
        exit(1)
    }
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
