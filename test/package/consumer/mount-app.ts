// A TypeScript app mounting the kit's router and a step-up guard, type-checked against whichever
// @types/express the app installed (4 or 5) with the shipped declarations.
import express from 'express';
import session from 'express-session';
import { guard, kit } from './ts-consumer.js';

const app = express();
app.use(session({ secret: 'a-long-random-session-secret', resave: false, saveUninitialized: false }));
app.use(kit.router);
app.get('/security', guard, (_req, res) => {
  res.send('Your recovery codes');
});
export default app;
