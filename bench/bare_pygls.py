"""The startup floor: a pygls 2 language server that only answers ``initialize``
(and ``shutdown``/``exit``), started the same way as agentls."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare-pygls", "0").start_io()
