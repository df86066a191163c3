"""Bytes to lines for every reader: opening local, cloud and compressed files; safe XML."""
