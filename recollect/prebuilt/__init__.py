"""The prebuilt memory nodes, the `create_agent` middleware and the `create_react_agent` hooks;
import them from `recollect`."""
