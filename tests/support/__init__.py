"""Helpers that several test files share — builders, runners, watchers — and no tests.

A test file imports its helpers from here, never from another test file: a test module is
then only ever loaded by pytest, once, for its own tests.
"""
