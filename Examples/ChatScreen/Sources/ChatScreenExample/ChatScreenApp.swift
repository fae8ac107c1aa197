import Foundation
import HistoryClient
import SwiftUI

/// The inbox of "ana" on a local server in open mode (`history-server
/// --port 8080`, then a conversation with ana as a member), and each chat
/// screen it opens.
@main
struct ChatScreenApp: App {
    private let client = ChatHistoryClient(baseURL: URL(string: "http://127.0.0.1:8080")!)

    var body: some Scene {
        WindowGroup {
            InboxView(model: InboxViewModel(client: client, user: "ana"), client: client, me: "ana")
        }
    }
}
